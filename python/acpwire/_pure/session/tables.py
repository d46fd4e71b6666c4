"""Twin of src/session/tables.rs: the protocol's tables, read off the v1 and v2 schemas.

The methods each side handles, the update variants of one version only, the keys a response
must have, and the JSON type of the fields of each known update variant. The rest of the
package reads them through the names defined here (no leading underscore), and nothing else.
"""

# Methods handled by the agent (sent by the client) and by the client (sent by the agent),
# from meta.json and meta.unstable.json of v1 and v2. mcp/message goes both ways: untracked.
AGENT_METHODS = frozenset(
    [
        "initialize",
        "authenticate",
        "auth/login",
        "auth/logout",
        "logout",
        "providers/list",
        "providers/set",
        "providers/disable",
        "session/new",
        "session/load",
        "session/set_mode",
        "session/set_config_option",
        "session/prompt",
        "session/cancel",
        "session/list",
        "session/delete",
        "session/fork",
        "session/resume",
        "session/close",
        "nes/start",
        "nes/suggest",
        "nes/accept",
        "nes/reject",
        "nes/close",
        "document/didOpen",
        "document/didChange",
        "document/didClose",
        "document/didSave",
        "document/didFocus",
    ]
)
CLIENT_METHODS = frozenset(
    [
        "session/request_permission",
        "session/update",
        "fs/write_text_file",
        "fs/read_text_file",
        "terminal/create",
        "terminal/output",
        "terminal/release",
        "terminal/wait_for_exit",
        "terminal/kill",
        "mcp/connect",
        "mcp/disconnect",
        "elicitation/create",
        "elicitation/complete",
    ]
)
V1_ONLY = frozenset(("tool_call", "plan", "current_mode_update"))
V2_ONLY = frozenset(
    (
        "user_message",
        "agent_message",
        "agent_thought",
        "state_update",
        "tool_call_content_chunk",
        "terminal_update",
        "terminal_output_chunk",
    )
)
UNKNOWN, V1, V2 = 0, 1, 2
# The mode under which a variant of one version only is unknown.
OTHER_VERSION = {**{k: V2 for k in V1_ONLY}, **{k: V1 for k in V2_ONLY}}


# The keys a successful response to a method must have (its response type's required
# properties in the v1 and v2 schemas): they tell which of two requests sharing an id a result
# answers. A prompt's response requires stopReason in v1; in v2 the schema requires nothing,
# yet the spec's prompt lifecycle returns messageId.
RESPONSE_KEYS = {
    "initialize": ("protocolVersion",),
    "session/new": ("sessionId",),
    "session/fork": ("sessionId",),
    "nes/start": ("sessionId",),
    "session/list": ("sessions",),
    "session/set_config_option": ("configOptions",),
    "session/prompt": ("stopReason",),
    "providers/list": ("providers",),
    "nes/suggest": ("suggestions",),
    "session/request_permission": ("outcome",),
    "fs/read_text_file": ("content",),
    "terminal/create": ("terminalId",),
    "terminal/output": ("output", "truncated"),
    "elicitation/create": ("action",),
    "mcp/connect": ("connectionId",),
}
V2_PROMPT_KEYS = ("messageId",)


STR = ((str,), "a string")
INT = ((int,), "an integer")
NUM = ((int, float), "a number")
ARR = ((list,), "an array")
OBJ = ((dict,), "an object")
# A field's need: absent or null passes (OPT); present with its type (REQ); required, but
# its presence and type are the handler's, with its own error, and only what is inside is
# checked here (INNER); a required array the schemas mark default-on-error: absent is the
# handler's error, but present with another type (null too) it reads as [] (DEFAULT).
OPT, REQ, INNER, DEFAULT = 0, 1, 2, 3
# What is inside a field: nothing checked (None); an object whose members are checked
# ("shaped", fields); an array each item of which is checked ("items", item); one item
# ("one", item). Members are checked by type only: the rules stop one level down.


def _opt(name, ty, inside=None):
    return (name, *ty, OPT, inside)


def _req(name, ty):
    return (name, *ty, REQ, None)


def _default(name, item):
    return (name, *ARR, DEFAULT, ("items", item))


_META = _opt("_meta", OBJ)
# An item: (members, by_type) - an object with members and, when by_type is not empty, the
# members of its string `type` (listed in members) as (type, mode, fields), mode None for
# both versions, type ANY_TYPE for any item of the version; other types stay raw. Before
# initialize only the rules of both are checked.
ANY_TYPE = "*"
_TOOL_CALL_CONTENT = (
    (_req("type", STR),),
    (
        ("content", None, (_req("content", OBJ), _META)),
        (
            "diff",
            V1,
            (_req("path", STR), _opt("oldText", STR), _req("newText", STR), _META),
        ),
        ("diff", V2, (_req("changes", ARR), _opt("patch", OBJ), _META)),
        ("terminal", None, (_req("terminalId", STR), _META)),
    ),
)
# A ContentBlock, named by its type; the members of each type stay raw.
_CONTENT_BLOCK = ((_req("type", STR),), ())
_TOOL_CALL_LOCATION = ((_req("path", STR), _opt("line", INT), _META), ())
# An AvailableCommand: `input` is one of several objects.
_AVAILABLE_COMMAND = (
    (_req("name", STR), _req("description", STR), _opt("input", OBJ), _META),
    (),
)
# A SessionConfigOption, named by `id` in v1 and `configId` in v2; `category` is an open
# enum, and the members of each kind of option stay raw.
_CONFIG_OPTION = (
    (_req("name", STR), _opt("description", STR), _opt("category", STR), _META),
    (
        (ANY_TYPE, V1, (_req("id", STR),)),
        (ANY_TYPE, V2, (_req("configId", STR),)),
    ),
)
# priority and status are open enums.
_PLAN_ENTRY = (
    (_req("content", STR), _req("priority", STR), _req("status", STR), _META),
    (),
)
_CHUNK_FIELDS = (_opt("messageId", STR), _META)
_UPSERT_FIELDS = (_opt("content", ARR, ("items", _CONTENT_BLOCK)), _META)
_TOOL_CALL_FIELDS = (
    _opt("title", STR),
    _opt("name", STR),
    _opt("kind", STR),
    _opt("status", STR),
    _opt("content", ARR, ("items", _TOOL_CALL_CONTENT)),
    _opt("locations", ARR, ("items", _TOOL_CALL_LOCATION)),
    _META,
)
_ONLY_META = (_META,)
# The JSON type of every optional field of the known variants, read off the v1 and v2 schemas
# (stable and unstable) and, for subagent_update and the session messages, the subagent
# drafts, with the members of the nested objects and the items of the arrays the schemas
# type, one level down (also the one item of a tool_call_content_chunk, the entries of a v1
# plan and, asked by its handler, of a plan_update); `null` passes for each optional one (v2:
# clears; v1: omission). Required fields are checked by the handlers; open enums take any
# string; rawInput/rawOutput and the subagent `state` take anything; unknown fields, and items
# of unknown type, stay raw. What does not fit is repaired as the schemas' decoding marks say
# (`_repair`). The same table and rules are check.rs's FIELD_TYPES and repair.
FIELD_TYPES = {
    "user_message_chunk": _CHUNK_FIELDS,
    "agent_message_chunk": _CHUNK_FIELDS,
    "agent_thought_chunk": _CHUNK_FIELDS,
    "session_message_chunk": (
        _opt("messageId", STR),
        _opt("senderSessionId", STR),
        _opt("recipientSessionId", STR),
        _META,
    ),
    "user_message": _UPSERT_FIELDS,
    "agent_message": _UPSERT_FIELDS,
    "agent_thought": _UPSERT_FIELDS,
    "session_message": (
        _opt("messageId", STR),
        _opt("content", ARR, ("items", _CONTENT_BLOCK)),
        _opt("senderSessionId", STR),
        _opt("recipientSessionId", STR),
        _META,
    ),
    "tool_call": _TOOL_CALL_FIELDS,
    "tool_call_update": _TOOL_CALL_FIELDS,
    "tool_call_content_chunk": (
        ("content", *OBJ, INNER, ("one", _TOOL_CALL_CONTENT)),
        _META,
    ),
    "terminal_update": (
        _opt("command", STR),
        _opt("cwd", STR),
        _opt("output", OBJ, ("shaped", (_req("data", STR), _META))),
        _opt(
            "exitStatus",
            OBJ,
            ("shaped", (_opt("exitCode", INT), _opt("signal", STR), _META)),
        ),
        _META,
    ),
    "terminal_output_chunk": _ONLY_META,
    "plan": (_default("entries", _PLAN_ENTRY), _META),
    "plan_update": _ONLY_META,
    "plan_removed": _ONLY_META,
    "available_commands_update": (_default("availableCommands", _AVAILABLE_COMMAND), _META),
    "config_option_update": (_default("configOptions", _CONFIG_OPTION), _META),
    "current_mode_update": _ONLY_META,
    "session_info_update": (_opt("title", STR), _opt("updatedAt", STR), _META),
    "usage_update": (
        _opt(
            "cost",
            OBJ,
            ("shaped", (_req("amount", NUM), _req("currency", STR), _META)),
        ),
        _META,
    ),
    "state_update": (
        _opt("stopReason", STR),
        _opt(
            "usage",
            OBJ,
            (
                "shaped",
                (
                    _req("totalTokens", INT),
                    _req("inputTokens", INT),
                    _req("outputTokens", INT),
                    _opt("thoughtTokens", INT),
                    _opt("cachedReadTokens", INT),
                    _opt("cachedWriteTokens", INT),
                    _META,
                ),
            ),
        ),
        _META,
    ),
    "notice": (_opt("description", STR), _META),
    "compaction_update": (
        _opt("summary", ARR, ("items", _CONTENT_BLOCK)),
        _opt("error", STR),
        _META,
    ),
    "compaction_summary_chunk": (
        ("content", *OBJ, INNER, ("one", _CONTENT_BLOCK)),
        _META,
    ),
    "subagent_update": (
        _opt("name", STR),
        _opt("task", STR),
        _opt("title", STR),
        _opt("description", STR),
        _opt("capabilities", OBJ),
        _META,
    ),
}
# The same rules by field name, for walking an update's own keys.
FIELD_RULES = {kind: {field[0]: field for field in fields} for kind, fields in FIELD_TYPES.items()}
