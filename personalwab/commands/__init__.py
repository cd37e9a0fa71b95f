"""The command line's commands by group, and what they share (options, errors as exit statuses); `personalwab.cli`
assembles them into one application. May import: every layer."""
