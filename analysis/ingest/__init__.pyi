"""Reading transcripts: format sniffing, JSON lines, Claude Code, Codex, OpenAI-format and OTLP
files, and the ingest report."""

from ._context import (
    DEFAULT_MAX_RESULT_CHARS as DEFAULT_MAX_RESULT_CHARS,
)
from ._loader import (
    formats as formats,
    load as load,
    load_catalog as load_catalog,
)
from ._roots import (
    OutsideRoot as OutsideRoot,
    confine as confine,
    inside_root as inside_root,
)
from ._summary import (
    IngestReport as IngestReport,
    ingest_report as ingest_report,
)
from ._uploads import (
    PrivateFolder as PrivateFolder,
    save_uploads as save_uploads,
    upload_name as upload_name,
)
