"""OTel GenAI / Pydantic AI spans, secret removal, and sending to an OTLP endpoint."""

from ._otlp import (
    chat_attributes as chat_attributes,
    evaluation_attributes as evaluation_attributes,
    export_counts as export_counts,
    export_otlp_json as export_otlp_json,
    export_request as export_request,
)
from ._paths import (
    without_home as without_home,
)
from ._sanitize import (
    DEFAULT_MAX_CHARS as DEFAULT_MAX_CHARS,
    Sanitizer as Sanitizer,
)
from ._send import (
    SendPreview as SendPreview,
    prepare as prepare,
    send as send,
)
