// Generated from protocol/tables.json by `python scripts/gen_tables.py`: do not edit.
//! The protocol tables: methods by the side that handles them, the `session/update`
//! variants of one version only, the keys of response types, and the field types of
//! the known variants (read by [`super::check`]). Where each comes from:
//! `protocol/SOURCES.md`.

use super::check::{Field, Item, Need, Ty, Ver};

/// Methods handled by the agent (sent by the client), v1 and v2, stable and unstable.
pub(super) const AGENT_METHODS: &[&str] = &[
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
];

/// Methods handled by the client (sent by the agent).
pub(super) const CLIENT_METHODS: &[&str] = &[
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
];

/// `session/update` variants of v1 only: unknown under v2 rules.
pub(super) const V1_ONLY: &[&str] = &["tool_call", "plan", "current_mode_update"];

/// `session/update` variants of v2 only: unknown under v1 rules.
pub(super) const V2_ONLY: &[&str] = &[
    "user_message",
    "agent_message",
    "agent_thought",
    "state_update",
    "tool_call_content_chunk",
    "terminal_update",
    "terminal_output_chunk",
];

/// The keys a successful response to `method` must have (for `session/prompt`, under v1
/// rules: see [`V2_PROMPT_KEYS`]).
pub(super) fn response_keys(method: &str) -> &'static [&'static str] {
    match method {
        "initialize" => &["protocolVersion"],
        "session/new" | "session/fork" | "nes/start" => &["sessionId"],
        "session/list" => &["sessions"],
        "session/set_config_option" => &["configOptions"],
        "session/prompt" => &["stopReason"],
        "providers/list" => &["providers"],
        "nes/suggest" => &["suggestions"],
        "session/request_permission" => &["outcome"],
        "fs/read_text_file" => &["content"],
        "terminal/create" => &["terminalId"],
        "terminal/output" => &["output", "truncated"],
        "elicitation/create" => &["action"],
        "mcp/connect" => &["connectionId"],
        _ => &[],
    }
}

/// The keys a v2 prompt's response must have.
pub(super) const V2_PROMPT_KEYS: &[&str] = &["messageId"];

/// In [`Item::by_type`], members every item has in that version, whatever its type.
pub(super) const ANY_TYPE: &str = "*";

/// The values of a tool call's `status` the schemas name, v1 and v2 (a tool call stores
/// one of them as its index).
pub(super) const TOOL_CALL_STATUSES: &[&str] = &[
    "pending",
    "in_progress",
    "completed",
    "failed",
    "cancelled",
];

/// The values of a tool call's `kind` the schemas name, v1 and v2.
pub(super) const TOOL_KINDS: &[&str] = &[
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
];

/// `ToolCallContent`: v1 and v2 differ in what a diff carries.
pub(super) const TOOL_CALL_CONTENT: Item = Item {
    members: &[
        ("type", Ty::Str, Need::Req),
    ],
    by_type: &[
        (
            "content",
            Ver::Both,
            &[
                ("content", Ty::Obj, Need::Req),
                ("_meta", Ty::Obj, Need::Opt),
            ],
        ),
        (
            "diff",
            Ver::V1,
            &[
                ("path", Ty::Str, Need::Req),
                ("oldText", Ty::Str, Need::Opt),
                ("newText", Ty::Str, Need::Req),
                ("_meta", Ty::Obj, Need::Opt),
            ],
        ),
        (
            "diff",
            Ver::V2,
            &[
                ("changes", Ty::Arr, Need::Req),
                ("patch", Ty::Obj, Need::Opt),
                ("_meta", Ty::Obj, Need::Opt),
            ],
        ),
        (
            "terminal",
            Ver::Both,
            &[
                ("terminalId", Ty::Str, Need::Req),
                ("_meta", Ty::Obj, Need::Opt),
            ],
        ),
    ],
};

/// `ToolCallLocation`.
pub(super) const TOOL_CALL_LOCATION: Item = Item {
    members: &[
        ("path", Ty::Str, Need::Req),
        ("line", Ty::Int, Need::Opt),
        ("_meta", Ty::Obj, Need::Opt),
    ],
    by_type: &[],
};

/// A `ContentBlock`, named by its `type`; the members of each type stay raw.
pub(super) const CONTENT_BLOCK: Item = Item {
    members: &[
        ("type", Ty::Str, Need::Req),
    ],
    by_type: &[],
};

/// An `AvailableCommand`: `input` is one of several objects.
pub(super) const AVAILABLE_COMMAND: Item = Item {
    members: &[
        ("name", Ty::Str, Need::Req),
        ("description", Ty::Str, Need::Req),
        ("input", Ty::Obj, Need::Opt),
        ("_meta", Ty::Obj, Need::Opt),
    ],
    by_type: &[],
};

/// A `SessionConfigOption`, named by `id` in v1 and `configId` in v2; `category` is an open enum,
/// and the members of each kind of option stay raw.
pub(super) const CONFIG_OPTION: Item = Item {
    members: &[
        ("name", Ty::Str, Need::Req),
        ("description", Ty::Str, Need::Opt),
        ("category", Ty::Str, Need::Opt),
        ("_meta", Ty::Obj, Need::Opt),
    ],
    by_type: &[
        (
            ANY_TYPE,
            Ver::V1,
            &[
                ("id", Ty::Str, Need::Req),
            ],
        ),
        (
            ANY_TYPE,
            Ver::V2,
            &[
                ("configId", Ty::Str, Need::Req),
            ],
        ),
    ],
};

/// A `PlanEntry`: `priority` and `status` are open enums.
pub(super) const PLAN_ENTRY: Item = Item {
    members: &[
        ("content", Ty::Str, Need::Req),
        ("priority", Ty::Str, Need::Req),
        ("status", Ty::Str, Need::Req),
        ("_meta", Ty::Obj, Need::Opt),
    ],
    by_type: &[],
};

/// Variant -> its checked fields.
pub(super) const FIELD_TYPES: &[(&str, &[Field])] = &[
    (
        "user_message_chunk",
        &[
            ("messageId", Ty::Str, Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "agent_message_chunk",
        &[
            ("messageId", Ty::Str, Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "agent_thought_chunk",
        &[
            ("messageId", Ty::Str, Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "session_message_chunk",
        &[
            ("messageId", Ty::Str, Need::Opt),
            ("senderSessionId", Ty::Str, Need::Opt),
            ("recipientSessionId", Ty::Str, Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "user_message",
        &[
            ("content", Ty::Items(&CONTENT_BLOCK), Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "agent_message",
        &[
            ("content", Ty::Items(&CONTENT_BLOCK), Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "agent_thought",
        &[
            ("content", Ty::Items(&CONTENT_BLOCK), Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "session_message",
        &[
            ("messageId", Ty::Str, Need::Opt),
            ("content", Ty::Items(&CONTENT_BLOCK), Need::Opt),
            ("senderSessionId", Ty::Str, Need::Opt),
            ("recipientSessionId", Ty::Str, Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "tool_call",
        &[
            ("title", Ty::Str, Need::Opt),
            ("name", Ty::Str, Need::Opt),
            ("kind", Ty::Str, Need::Opt),
            ("status", Ty::Str, Need::Opt),
            ("content", Ty::Items(&TOOL_CALL_CONTENT), Need::Opt),
            ("locations", Ty::Items(&TOOL_CALL_LOCATION), Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "tool_call_update",
        &[
            ("title", Ty::Str, Need::Opt),
            ("name", Ty::Str, Need::Opt),
            ("kind", Ty::Str, Need::Opt),
            ("status", Ty::Str, Need::Opt),
            ("content", Ty::Items(&TOOL_CALL_CONTENT), Need::Opt),
            ("locations", Ty::Items(&TOOL_CALL_LOCATION), Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "tool_call_content_chunk",
        &[
            ("content", Ty::One(&TOOL_CALL_CONTENT), Need::Inner),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "terminal_update",
        &[
            ("command", Ty::Str, Need::Opt),
            ("cwd", Ty::Str, Need::Opt),
            ("output", Ty::Shaped(&[("data", Ty::Str, Need::Req), ("_meta", Ty::Obj, Need::Opt)]), Need::Opt),
            ("exitStatus", Ty::Shaped(&[("exitCode", Ty::Int, Need::Opt), ("signal", Ty::Str, Need::Opt), ("_meta", Ty::Obj, Need::Opt)]), Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "terminal_output_chunk",
        &[
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "plan",
        &[
            ("entries", Ty::Items(&PLAN_ENTRY), Need::Default),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "plan_update",
        &[
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "plan_removed",
        &[
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "available_commands_update",
        &[
            ("availableCommands", Ty::Items(&AVAILABLE_COMMAND), Need::Default),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "config_option_update",
        &[
            ("configOptions", Ty::Items(&CONFIG_OPTION), Need::Default),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "current_mode_update",
        &[
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "session_info_update",
        &[
            ("title", Ty::Str, Need::Opt),
            ("updatedAt", Ty::Str, Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "usage_update",
        &[
            ("cost", Ty::Shaped(&[("amount", Ty::Num, Need::Req), ("currency", Ty::Str, Need::Req), ("_meta", Ty::Obj, Need::Opt)]), Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "state_update",
        &[
            ("stopReason", Ty::Str, Need::Opt),
            ("usage", Ty::Shaped(&[("totalTokens", Ty::Int, Need::Req), ("inputTokens", Ty::Int, Need::Req), ("outputTokens", Ty::Int, Need::Req), ("thoughtTokens", Ty::Int, Need::Opt), ("cachedReadTokens", Ty::Int, Need::Opt), ("cachedWriteTokens", Ty::Int, Need::Opt), ("_meta", Ty::Obj, Need::Opt)]), Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "notice",
        &[
            ("description", Ty::Str, Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "compaction_update",
        &[
            ("summary", Ty::Items(&CONTENT_BLOCK), Need::Opt),
            ("error", Ty::Str, Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "compaction_summary_chunk",
        &[
            ("content", Ty::One(&CONTENT_BLOCK), Need::Inner),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
    (
        "subagent_update",
        &[
            ("name", Ty::Str, Need::Opt),
            ("task", Ty::Str, Need::Opt),
            ("title", Ty::Str, Need::Opt),
            ("description", Ty::Str, Need::Opt),
            ("capabilities", Ty::Obj, Need::Opt),
            ("_meta", Ty::Obj, Need::Opt),
        ],
    ),
];
