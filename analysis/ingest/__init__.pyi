"""Reading transcripts: format sniffing, JSON lines, Claude Code, Codex, OpenAI-format and OTLP
files, and the ingest report."""

from ._context import (
    DEFAULT_MAX_RESULT_CHARS as DEFAULT_MAX_RESULT_CHARS,
)
from ._loader import (
    SCORER_FILES as SCORER_FILES,
    discover as discover,
    discover_resolved as discover_resolved,
    formats as formats,
    load as load,
    load_catalog as load_catalog,
)
from ._registered import (
    registered as registered,
)
from ._roots import (
    OUTSIDE_REASON as OUTSIDE_REASON,
    OutsideRoot as OutsideRoot,
    confine as confine,
    inside_root as inside_root,
)
from ._summary import (
    IngestReport as IngestReport,
    IngestTotals as IngestTotals,
    IssueGroup as IssueGroup,
    SessionSummary as SessionSummary,
    grouped_issues as grouped_issues,
    ingest_report as ingest_report,
    sorted_counts as sorted_counts,
    why_nothing_loaded as why_nothing_loaded,
)
from ._uploads import (
    UPLOAD_FILES_ENV as UPLOAD_FILES_ENV,
    UPLOAD_MB_ENV as UPLOAD_MB_ENV,
    PrivateFolder as PrivateFolder,
    UploadLimits as UploadLimits,
    save_uploads as save_uploads,
    upload_name as upload_name,
)
