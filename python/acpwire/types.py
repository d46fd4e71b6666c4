"""Types of the values acpwire takes and returns: JSON, JSON-RPC messages, session snapshots.

Everything here is a type for annotations and type checkers (``TypedDict``\\s and aliases); at
run time the values are plain dicts, lists and tuples, identical on both backends. Shapes
follow ``docs/behaviour/sessions.md``. A field that may be absent is ``NotRequired``; entities
keep the unknown fields an agent sends, so a dict may hold keys its type does not name::

    from acpwire.types import SessionSnapshot, ToolCall

    snapshot: SessionSnapshot = store["s1"].snapshot()
    call: ToolCall = snapshot["toolCalls"]["call-1"]
    status = call.get("status")  # str | None
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Literal, TypeAlias, TypedDict

if sys.version_info >= (3, 11):
    from typing import NotRequired, Required
else:  # a dependency before 3.11 (pyproject.toml)
    from typing_extensions import NotRequired, Required

__all__ = [
    "AvailableCommand",
    "Change",
    "ChangeType",
    "Compaction",
    "ConfigOption",
    "ContentBlock",
    "Cost",
    "ErrorRecord",
    "ExitStatus",
    "JSONInput",
    "JSONObject",
    "JSONValue",
    "JoinedPrompt",
    "JsonRpcError",
    "JsonRpcErrorResponse",
    "JsonRpcMessage",
    "JsonRpcNotification",
    "JsonRpcRequest",
    "JsonRpcResponse",
    "Message",
    "MessageTruncation",
    "Permission",
    "Plan",
    "PlanEntry",
    "Prompt",
    "RequestId",
    "Role",
    "SessionInfo",
    "SessionSnapshot",
    "Subagent",
    "TerminalEntry",
    "TerminalOutput",
    "TimelineEntry",
    "TimelineType",
    "ToolCall",
    "ToolCallLocation",
    "Turn",
    "Usage",
]

# --- JSON ---------------------------------------------------------------------------------

#: A JSON value as acpwire returns it: what ``json.loads`` makes (``float`` may be ``inf``).
JSONValue: TypeAlias = bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"] | None
#: A JSON object as acpwire returns it.
JSONObject: TypeAlias = dict[str, JSONValue]
#: A JSON value as acpwire takes it (``Sessions.apply``): read-only views, so that a
#: ``dict[str, str]`` or a tuple is accepted too. At run time mappings must be ``dict`` and
#: sequences ``list`` or ``tuple`` (anything else is a ``TypeError``).
JSONInput: TypeAlias = (
    bool | int | float | str | Sequence["JSONInput"] | Mapping[str, "JSONInput"] | None
)

# --- JSON-RPC 2.0 messages ----------------------------------------------------------------

#: A request id: JSON-RPC allows a string or a number (``2.0`` and ``2`` are different ids).
RequestId: TypeAlias = str | int | float


class JsonRpcRequest(TypedDict):
    """A request: it has an ``id``, and the other side answers it."""

    jsonrpc: Literal["2.0"]
    id: RequestId
    method: str
    params: NotRequired[JSONValue]


class JsonRpcNotification(TypedDict):
    """A notification (``session/update``, ``session/cancel``): no ``id``, no answer."""

    jsonrpc: Literal["2.0"]
    method: str
    params: NotRequired[JSONValue]


class JsonRpcResponse(TypedDict):
    """A successful response to the request with the same ``id``."""

    jsonrpc: Literal["2.0"]
    id: RequestId
    result: JSONValue


class JsonRpcError(TypedDict):
    """The ``error`` member of an error response."""

    code: int
    message: str
    data: NotRequired[JSONValue]


class JsonRpcErrorResponse(TypedDict):
    """An error response; ``id`` is None when the request could not be read."""

    jsonrpc: Literal["2.0"]
    id: RequestId | None
    error: JsonRpcError


#: Any JSON-RPC 2.0 message of ACP, either direction.
JsonRpcMessage: TypeAlias = (
    JsonRpcRequest | JsonRpcNotification | JsonRpcResponse | JsonRpcErrorResponse
)

# --- Error records and changes ------------------------------------------------------------


class ErrorRecord(TypedDict):
    """A bad frame or an update that did not fit (``Sessions.errors``, a snapshot's
    ``errors``). ``line`` and ``offset`` are None for a message given to ``apply``;
    ``sessionId`` is None when the frame names no readable session."""

    line: int | None
    offset: int | None
    sessionId: str | None
    reason: str


#: The ``type`` of a timeline entry.
TimelineType: TypeAlias = Literal[
    "message", "toolCall", "terminal", "plan", "compaction", "turn", "other"
]
#: The entity type of a change: a message's by its role (``userMessage``, ``agentMessage``,
#: ``thought``, ``sessionMessage``), another timeline type, ``subagent``, or ``session`` (its id
#: is then the snapshot key that changed, such as ``state``, ``prompts`` or ``turns``).
ChangeType: TypeAlias = Literal[
    "userMessage",
    "agentMessage",
    "thought",
    "sessionMessage",
    "toolCall",
    "terminal",
    "plan",
    "compaction",
    "other",
    "subagent",
    "session",
]
#: One entry of ``Sessions.changes()``: (sessionId, entity type, id).
Change: TypeAlias = tuple[str, ChangeType, str]

# --- Snapshot entities --------------------------------------------------------------------

#: The role a message is keyed by, with its ``messageId``.
Role: TypeAlias = Literal["user", "agent", "thought", "session"]


class ContentBlock(TypedDict, total=False):
    """An ACP content block: ``type`` is always a string (``text``, ``image``, ``resource``,
    ...); the other members depend on it, and unknown types stay raw."""

    type: Required[str]
    text: str
    _meta: JSONObject


class MessageTruncation(TypedDict):
    """A message's ``truncated``, once its content passed the store's ``max_message_bytes``:
    the blocks dropped whole and the size dropped (whole blocks and cut text)."""

    blocks: int
    bytes: int


class Message(TypedDict, total=False):
    """An entry of ``messages``: a message keyed by (``role``, ``id``)."""

    id: Required[str]
    role: Required[Role]
    content: list[ContentBlock]
    _meta: JSONObject
    truncated: MessageTruncation


class ToolCallLocation(TypedDict, total=False):
    """An entry of a tool call's ``locations``."""

    path: Required[str]
    line: int | None
    _meta: JSONObject


class ToolCall(TypedDict, total=False):
    """An entry of ``toolCalls``. ``kind`` and ``status`` are open enums (any string);
    ``content`` items are objects with a string ``type`` (``content``, ``diff``,
    ``terminal``, or another kept raw)."""

    toolCallId: Required[str]
    title: str
    name: str
    kind: str
    status: str
    content: list[JSONObject]
    locations: list[ToolCallLocation]
    rawInput: JSONValue
    rawOutput: JSONValue
    _meta: JSONObject


class ExitStatus(TypedDict, total=False):
    """A terminal's ``exitStatus``."""

    exitCode: int | None
    signal: str | None
    _meta: JSONObject


class TerminalOutput(TypedDict, total=False):
    """A terminal's ``output``: the ``_meta`` of the last output snapshot that had one."""

    _meta: JSONObject


class TerminalEntry(TypedDict, total=False):
    """An entry of ``terminals``: the terminal's fields, then what it shows (``text``
    rendered at snapshot time, ``bytes`` fed since the last output snapshot, ``truncated``).
    ``source`` says which side runs it."""

    terminalId: Required[str]
    source: Literal["client", "agent"]
    command: str
    args: list[str]
    cwd: str
    env: list[JSONObject]
    outputByteLimit: int
    killed: bool
    released: bool
    exitStatus: ExitStatus
    output: TerminalOutput
    _meta: JSONObject
    text: Required[str]
    bytes: Required[int]
    truncated: Required[bool]


class PlanEntry(TypedDict, total=False):
    """An entry of an ``items`` plan's ``entries``."""

    content: Required[str]
    priority: Required[str]
    status: Required[str]
    _meta: JSONObject


class Plan(TypedDict, total=False):
    """An entry of ``plans``: ``items`` (v1's one plan, ``planId`` ``main``), ``markdown``
    (with ``content``), ``file`` (with ``uri``), or another type kept raw."""

    type: Required[str]
    planId: str
    entries: list[PlanEntry]
    content: str
    uri: str
    _meta: JSONObject


class Compaction(TypedDict, total=False):
    """An entry of ``compactions``; ``status`` is absent until an update sets it."""

    compactionId: Required[str]
    status: str
    summary: list[ContentBlock]
    error: JSONValue
    _meta: JSONObject


class Cost(TypedDict):
    """A ``usage_update``'s ``cost``."""

    amount: float
    currency: str


class Usage(TypedDict, total=False):
    """The last ``usage_update``: tokens ``used`` of the context's ``size``."""

    used: Required[int]
    size: Required[int]
    cost: Cost
    _meta: JSONObject


class SessionInfo(TypedDict, total=False):
    """``session_info_update`` fields, patched."""

    title: str
    updatedAt: str
    _meta: JSONObject


class AvailableCommand(TypedDict, total=False):
    """An entry of ``availableCommands``."""

    name: Required[str]
    description: Required[str]
    input: JSONObject
    _meta: JSONObject


class ConfigOption(TypedDict, total=False):
    """An entry of ``configOptions``: ``id`` (v1) or ``configId`` (v2), and ``name``."""

    id: str
    configId: str
    name: Required[str]
    description: str
    category: str
    _meta: JSONObject


class Permission(TypedDict, total=False):
    """An entry of ``permissions``: a ``session/request_permission`` request's params (but
    ``sessionId``), with ``response`` or ``error`` once answered."""

    requestId: Required[RequestId]
    toolCall: JSONObject
    title: str
    options: list[JSONObject]
    response: JSONValue
    error: JSONValue
    _meta: JSONObject


class Prompt(TypedDict, total=False):
    """An entry of ``prompts``: a ``session/prompt`` request's params (but ``sessionId``),
    with ``response`` (v1 ``{stopReason}``, v2 ``{messageId}``) or ``error`` once answered,
    and ``cancelRequested`` once a ``session/cancel`` marked it."""

    requestId: Required[RequestId]
    prompt: list[ContentBlock]
    messageId: str
    response: JSONObject
    error: JSONValue
    cancelRequested: bool
    _meta: JSONObject


class JoinedPrompt(TypedDict):
    """A v2 prompt sent while a turn ran, kept in that turn's ``joined``."""

    requestId: RequestId | None
    prompt: list[ContentBlock] | None
    messageId: NotRequired[str]
    error: NotRequired[JSONValue]


class Turn(TypedDict):
    """An entry of ``turns``: one prompt's turn, from its request to what ended it
    (``timeline[start:end]``; ``end`` is None while it runs)."""

    requestId: RequestId | None
    prompt: list[ContentBlock] | None
    messageId: NotRequired[str]
    stopReason: str | None
    cancelRequested: bool
    usage: NotRequired[JSONObject]
    error: NotRequired[JSONValue]
    joined: NotRequired[list[JoinedPrompt]]
    start: int
    end: int | None


class Subagent(TypedDict, total=False):
    """An entry of ``subagents``: ``subagent_update`` fields, patched."""

    _meta: JSONObject


class TimelineEntry(TypedDict):
    """An entry of ``timeline``: what was placed, in first-seen order; messages add their
    ``role``."""

    type: TimelineType
    id: str
    role: NotRequired[Role]


class SessionSnapshot(TypedDict):
    """``Session.snapshot()``: every key is always present."""

    sessionId: str
    protocolVersion: int | None
    state: str | None
    stopReason: str | None
    messages: list[Message]
    toolCalls: dict[str, ToolCall]
    terminals: dict[str, TerminalEntry]
    plans: dict[str, Plan]
    compactions: dict[str, Compaction]
    usage: Usage | None
    info: SessionInfo
    availableCommands: list[AvailableCommand] | None
    configOptions: list[ConfigOption] | None
    currentModeId: str | None
    permissions: list[Permission]
    prompts: list[Prompt]
    turns: list[Turn]
    notices: list[JSONObject]
    other: list[JSONObject]
    timeline: list[TimelineEntry]
    errors: list[ErrorRecord]
    subagents: dict[str, Subagent]
    updateExtras: dict[str, JSONObject]
