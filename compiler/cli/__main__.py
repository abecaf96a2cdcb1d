from compiler.cli import entry

entry()
