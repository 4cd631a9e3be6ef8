"""The self-contained HTML report."""

from ._html import (
    ReportSection as ReportSection,
    build_report as build_report,
    render_report as render_report,
    report_sections as report_sections,
    study_sections as study_sections,
)
