"""The one place a model is called: requests with a forced tool (structured output), parsing
and re-asking malformed answers, retries, the answer cache, tokens and cost."""

from ._cache import (
    AnswerCache as AnswerCache,
    default_cache_dir as default_cache_dir,
)
from ._client import (
    Answer as Answer,
    LLMClient as LLMClient,
    open_client as open_client,
)
from ._config import (
    DEFAULT_TIMEOUT as DEFAULT_TIMEOUT,
    ENDPOINTS_ENV as ENDPOINTS_ENV,
    KEY_ENVS as KEY_ENVS,
    NO_KEY as NO_KEY,
    PROVIDER_HOSTS as PROVIDER_HOSTS,
    PROVIDERS as PROVIDERS,
    EndpointError as EndpointError,
    EndpointRules as EndpointRules,
    ListedEndpoint as ListedEndpoint,
    LLMConfig as LLMConfig,
    LLMError as LLMError,
    ProviderName as ProviderName,
    batch_unsupported as batch_unsupported,
    endpoints_from_env as endpoints_from_env,
    endpoints_from_table as endpoints_from_table,
    is_own_api as is_own_api,
    key_from as key_from,
    needs_key as needs_key,
    parse_model_name as parse_model_name,
    same_endpoint as same_endpoint,
)
from ._cost import (
    BATCH_DISCOUNT as BATCH_DISCOUNT,
    CACHE_READ_PRICE as CACHE_READ_PRICE,
    CACHE_WRITE_PRICE as CACHE_WRITE_PRICE,
    DEFAULT_CONTEXT_TOKENS as DEFAULT_CONTEXT_TOKENS,
    MIN_CACHED_TOKENS as MIN_CACHED_TOKENS,
    PRICES as PRICES,
    AnswerTokens as AnswerTokens,
    RunStats as RunStats,
    add_tokens as add_tokens,
    context_of as context_of,
    cost_of as cost_of,
    cost_refusal as cost_refusal,
    dollars as dollars,
    min_cached_tokens as min_cached_tokens,
    price_of as price_of,
)
from ._openai import (
    OpenAIProvider as OpenAIProvider,
)
from ._provider import (
    ModelInfo as ModelInfo,
    Provider as Provider,
    ProviderFailure as ProviderFailure,
    Rejected as Rejected,
    Reply as Reply,
    StatusFailure as StatusFailure,
    TimedOut as TimedOut,
    Unreachable as Unreachable,
)
from ._request import (
    StructuredRequest as StructuredRequest,
    TextPart as TextPart,
    ToolSpec as ToolSpec,
    tool_for as tool_for,
)
