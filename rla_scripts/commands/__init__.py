"""One module per ``rla`` sub-command; each exposes ``register(subparsers)``.

A command module's ``register`` adds its parser and sets ``func`` (called with the parsed
namespace, returning an exit status) through ``parser.set_defaults(func=...)``.
"""

#: Sub-command modules, in the order ``rla --help`` lists them.
COMMAND_MODULES = [
    "init",
    "list",
    "view",
    "path",
    "archive",
    "delete",
    "trash",
    "migrate",
    "fsck",
    "plot",
    "sync",
    "index",
    "buffer",
    "tag",
    "note",
    "diff",
    "ui",
]
