# Generated from protocol/tables.json by `python scripts/gen_tables.py`: do not edit.
"""Twin of src/session/tables.rs: the protocol tables, generated.

Methods by the side that handles them, the session/update variants of one version only,
the keys of response types, and the field types of the known variants. Where each comes
from: protocol/SOURCES.md."""

# The rules in force: before initialize, v1, v2.
UNKNOWN, V1, V2 = 0, 1, 2
# A field's need: absent or null passes (OPT); present with its type (REQ); required, but
# its presence and type are the handler's (INNER); a required array that reads as [] when
# present with another type (DEFAULT).
OPT, REQ, INNER, DEFAULT = 0, 1, 2, 3
# A field's JSON type: the Python types that are it, and its name in error reasons.
STR = ((str,), "a string")
INT = ((int,), "an integer")
NUM = ((int, float), "a number")
ARR = ((list,), "an array")
OBJ = ((dict,), "an object")
# In an item's by_type, members every item has in that version, whatever its type.
ANY_TYPE = "*"
# Methods handled by the agent (sent by the client) and by the client (sent by the
# agent).
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
# session/update variants of one version only, and the rules under which each is
# unknown.
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
OTHER_VERSION = {**{k: V2 for k in V1_ONLY}, **{k: V1 for k in V2_ONLY}}
# The keys a successful response to a method must have (session/prompt: under v1 rules).
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
# The named values of a tool call's status and kind, v1 and v2 (a store keeps these
# objects rather than a copy per tool call).
TOOL_CALL_STATUSES = ("pending", "in_progress", "completed", "failed", "cancelled")
TOOL_KINDS = (
    "read",
    "edit",
    "delete",
    "move",
    "search",
    "execute",
    "think",
    "fetch",
    "switch_mode",
    "other",
)
# Variant -> its checked fields: (name, types, type name, need, inside), inside being
# None,
# ("shaped", fields), ("items", item) or ("one", item), and an item (members, by_type),
# by_type holding (type, version or None for both, fields).
FIELD_TYPES = {
    "user_message_chunk": (("messageId", *STR, OPT, None), ("_meta", *OBJ, OPT, None)),
    "agent_message_chunk": (
        ("messageId", *STR, OPT, None),
        ("_meta", *OBJ, OPT, None),
    ),
    "agent_thought_chunk": (
        ("messageId", *STR, OPT, None),
        ("_meta", *OBJ, OPT, None),
    ),
    "session_message_chunk": (
        ("messageId", *STR, OPT, None),
        ("senderSessionId", *STR, OPT, None),
        ("recipientSessionId", *STR, OPT, None),
        ("_meta", *OBJ, OPT, None),
    ),
    "user_message": (
        (
            "content",
            *ARR,
            OPT,
            ("items", ((("type", *STR, REQ, None),), ())),
        ),
        ("_meta", *OBJ, OPT, None),
    ),
    "agent_message": (
        (
            "content",
            *ARR,
            OPT,
            ("items", ((("type", *STR, REQ, None),), ())),
        ),
        ("_meta", *OBJ, OPT, None),
    ),
    "agent_thought": (
        (
            "content",
            *ARR,
            OPT,
            ("items", ((("type", *STR, REQ, None),), ())),
        ),
        ("_meta", *OBJ, OPT, None),
    ),
    "session_message": (
        ("messageId", *STR, OPT, None),
        (
            "content",
            *ARR,
            OPT,
            ("items", ((("type", *STR, REQ, None),), ())),
        ),
        ("senderSessionId", *STR, OPT, None),
        ("recipientSessionId", *STR, OPT, None),
        ("_meta", *OBJ, OPT, None),
    ),
    "tool_call": (
        ("title", *STR, OPT, None),
        ("name", *STR, OPT, None),
        ("kind", *STR, OPT, None),
        ("status", *STR, OPT, None),
        (
            "content",
            *ARR,
            OPT,
            (
                "items",
                (
                    (("type", *STR, REQ, None),),
                    (
                        (
                            "content",
                            None,
                            (
                                ("content", *OBJ, REQ, None),
                                ("_meta", *OBJ, OPT, None),
                            ),
                        ),
                        (
                            "diff",
                            V1,
                            (
                                ("path", *STR, REQ, None),
                                ("oldText", *STR, OPT, None),
                                ("newText", *STR, REQ, None),
                                ("_meta", *OBJ, OPT, None),
                            ),
                        ),
                        (
                            "diff",
                            V2,
                            (
                                ("changes", *ARR, REQ, None),
                                ("patch", *OBJ, OPT, None),
                                ("_meta", *OBJ, OPT, None),
                            ),
                        ),
                        (
                            "terminal",
                            None,
                            (
                                ("terminalId", *STR, REQ, None),
                                ("_meta", *OBJ, OPT, None),
                            ),
                        ),
                    ),
                ),
            ),
        ),
        (
            "locations",
            *ARR,
            OPT,
            (
                "items",
                (
                    (
                        ("path", *STR, REQ, None),
                        ("line", *INT, OPT, None),
                        ("_meta", *OBJ, OPT, None),
                    ),
                    (),
                ),
            ),
        ),
        ("_meta", *OBJ, OPT, None),
    ),
    "tool_call_update": (
        ("title", *STR, OPT, None),
        ("name", *STR, OPT, None),
        ("kind", *STR, OPT, None),
        ("status", *STR, OPT, None),
        (
            "content",
            *ARR,
            OPT,
            (
                "items",
                (
                    (("type", *STR, REQ, None),),
                    (
                        (
                            "content",
                            None,
                            (
                                (
                                    "content",
                                    *OBJ,
                                    REQ,
                                    None,
                                ),
                                ("_meta", *OBJ, OPT, None),
                            ),
                        ),
                        (
                            "diff",
                            V1,
                            (
                                ("path", *STR, REQ, None),
                                (
                                    "oldText",
                                    *STR,
                                    OPT,
                                    None,
                                ),
                                (
                                    "newText",
                                    *STR,
                                    REQ,
                                    None,
                                ),
                                ("_meta", *OBJ, OPT, None),
                            ),
                        ),
                        (
                            "diff",
                            V2,
                            (
                                (
                                    "changes",
                                    *ARR,
                                    REQ,
                                    None,
                                ),
                                ("patch", *OBJ, OPT, None),
                                ("_meta", *OBJ, OPT, None),
                            ),
                        ),
                        (
                            "terminal",
                            None,
                            (
                                (
                                    "terminalId",
                                    *STR,
                                    REQ,
                                    None,
                                ),
                                ("_meta", *OBJ, OPT, None),
                            ),
                        ),
                    ),
                ),
            ),
        ),
        (
            "locations",
            *ARR,
            OPT,
            (
                "items",
                (
                    (
                        ("path", *STR, REQ, None),
                        ("line", *INT, OPT, None),
                        ("_meta", *OBJ, OPT, None),
                    ),
                    (),
                ),
            ),
        ),
        ("_meta", *OBJ, OPT, None),
    ),
    "tool_call_content_chunk": (
        (
            "content",
            *OBJ,
            INNER,
            (
                "one",
                (
                    (("type", *STR, REQ, None),),
                    (
                        (
                            "content",
                            None,
                            (
                                (
                                    "content",
                                    *OBJ,
                                    REQ,
                                    None,
                                ),
                                (
                                    "_meta",
                                    *OBJ,
                                    OPT,
                                    None,
                                ),
                            ),
                        ),
                        (
                            "diff",
                            V1,
                            (
                                (
                                    "path",
                                    *STR,
                                    REQ,
                                    None,
                                ),
                                (
                                    "oldText",
                                    *STR,
                                    OPT,
                                    None,
                                ),
                                (
                                    "newText",
                                    *STR,
                                    REQ,
                                    None,
                                ),
                                (
                                    "_meta",
                                    *OBJ,
                                    OPT,
                                    None,
                                ),
                            ),
                        ),
                        (
                            "diff",
                            V2,
                            (
                                (
                                    "changes",
                                    *ARR,
                                    REQ,
                                    None,
                                ),
                                (
                                    "patch",
                                    *OBJ,
                                    OPT,
                                    None,
                                ),
                                (
                                    "_meta",
                                    *OBJ,
                                    OPT,
                                    None,
                                ),
                            ),
                        ),
                        (
                            "terminal",
                            None,
                            (
                                (
                                    "terminalId",
                                    *STR,
                                    REQ,
                                    None,
                                ),
                                (
                                    "_meta",
                                    *OBJ,
                                    OPT,
                                    None,
                                ),
                            ),
                        ),
                    ),
                ),
            ),
        ),
        ("_meta", *OBJ, OPT, None),
    ),
    "terminal_update": (
        ("command", *STR, OPT, None),
        ("cwd", *STR, OPT, None),
        (
            "output",
            *OBJ,
            OPT,
            (
                "shaped",
                (
                    ("data", *STR, REQ, None),
                    ("_meta", *OBJ, OPT, None),
                ),
            ),
        ),
        (
            "exitStatus",
            *OBJ,
            OPT,
            (
                "shaped",
                (
                    ("exitCode", *INT, OPT, None),
                    ("signal", *STR, OPT, None),
                    ("_meta", *OBJ, OPT, None),
                ),
            ),
        ),
        ("_meta", *OBJ, OPT, None),
    ),
    "terminal_output_chunk": (("_meta", *OBJ, OPT, None),),
    "plan": (
        (
            "entries",
            *ARR,
            DEFAULT,
            (
                "items",
                (
                    (
                        ("content", *STR, REQ, None),
                        ("priority", *STR, REQ, None),
                        ("status", *STR, REQ, None),
                        ("_meta", *OBJ, OPT, None),
                    ),
                    (),
                ),
            ),
        ),
        ("_meta", *OBJ, OPT, None),
    ),
    "plan_update": (("_meta", *OBJ, OPT, None),),
    "plan_removed": (("_meta", *OBJ, OPT, None),),
    "available_commands_update": (
        (
            "availableCommands",
            *ARR,
            DEFAULT,
            (
                "items",
                (
                    (
                        ("name", *STR, REQ, None),
                        (
                            "description",
                            *STR,
                            REQ,
                            None,
                        ),
                        ("input", *OBJ, OPT, None),
                        ("_meta", *OBJ, OPT, None),
                    ),
                    (),
                ),
            ),
        ),
        ("_meta", *OBJ, OPT, None),
    ),
    "config_option_update": (
        (
            "configOptions",
            *ARR,
            DEFAULT,
            (
                "items",
                (
                    (
                        ("name", *STR, REQ, None),
                        ("description", *STR, OPT, None),
                        ("category", *STR, OPT, None),
                        ("_meta", *OBJ, OPT, None),
                    ),
                    (
                        (
                            ANY_TYPE,
                            V1,
                            (("id", *STR, REQ, None),),
                        ),
                        (
                            ANY_TYPE,
                            V2,
                            (
                                (
                                    "configId",
                                    *STR,
                                    REQ,
                                    None,
                                ),
                            ),
                        ),
                    ),
                ),
            ),
        ),
        ("_meta", *OBJ, OPT, None),
    ),
    "current_mode_update": (("_meta", *OBJ, OPT, None),),
    "session_info_update": (
        ("title", *STR, OPT, None),
        ("updatedAt", *STR, OPT, None),
        ("_meta", *OBJ, OPT, None),
    ),
    "usage_update": (
        (
            "cost",
            *OBJ,
            OPT,
            (
                "shaped",
                (
                    ("amount", *NUM, REQ, None),
                    ("currency", *STR, REQ, None),
                    ("_meta", *OBJ, OPT, None),
                ),
            ),
        ),
        ("_meta", *OBJ, OPT, None),
    ),
    "state_update": (
        ("stopReason", *STR, OPT, None),
        (
            "usage",
            *OBJ,
            OPT,
            (
                "shaped",
                (
                    ("totalTokens", *INT, REQ, None),
                    ("inputTokens", *INT, REQ, None),
                    ("outputTokens", *INT, REQ, None),
                    ("thoughtTokens", *INT, OPT, None),
                    ("cachedReadTokens", *INT, OPT, None),
                    ("cachedWriteTokens", *INT, OPT, None),
                    ("_meta", *OBJ, OPT, None),
                ),
            ),
        ),
        ("_meta", *OBJ, OPT, None),
    ),
    "notice": (("description", *STR, OPT, None), ("_meta", *OBJ, OPT, None)),
    "compaction_update": (
        (
            "summary",
            *ARR,
            OPT,
            ("items", ((("type", *STR, REQ, None),), ())),
        ),
        ("error", *STR, OPT, None),
        ("_meta", *OBJ, OPT, None),
    ),
    "compaction_summary_chunk": (
        (
            "content",
            *OBJ,
            INNER,
            ("one", ((("type", *STR, REQ, None),), ())),
        ),
        ("_meta", *OBJ, OPT, None),
    ),
    "subagent_update": (
        ("name", *STR, OPT, None),
        ("task", *STR, OPT, None),
        ("title", *STR, OPT, None),
        ("description", *STR, OPT, None),
        ("capabilities", *OBJ, OPT, None),
        ("_meta", *OBJ, OPT, None),
    ),
}
# The same rules by field name, for walking an update's own keys.
FIELD_RULES = {kind: {field[0]: field for field in fields} for kind, fields in FIELD_TYPES.items()}
