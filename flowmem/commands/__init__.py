"""The `flowmem` commands, one record each (command.Command), one module per family.

server.py (serve, mcp), memories.py (add, search, delete-message, delete-user, stats),
listing.py (list), export_import.py (export, import), database.py (init, reindex,
backup, settings); command.py holds the record, the CLI's UsageError and loaded() (a
command's Config), parser.py the flags made from the settings and their help.
flowmem/cli.py lists the records in help order and runs the one named.
"""
