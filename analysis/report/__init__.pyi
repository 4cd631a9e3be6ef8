"""The self-contained HTML report."""

from ._data import (
    ReportData as ReportData,
)
from ._html import (
    LONG_CELL as LONG_CELL,
    ReportSection as ReportSection,
    build_report as build_report,
    render_report as render_report,
    report_findings as report_findings,
    report_sections as report_sections,
    study_sections as study_sections,
    table_html as table_html,
)
