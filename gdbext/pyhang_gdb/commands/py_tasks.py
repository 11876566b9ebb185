"""`py-tasks`: asyncio's event loops, the thread running each, their tasks
and what each awaits; await cycles; loops blocked inside a task's step."""
from pyhang_gdb import facts
from pyhang_gdb.commands.base import PyhangCommand, no_arguments


class PyTasks(PyhangCommand):
    """py-tasks: every asyncio task of the process, per event loop and the
thread running it: its coroutine stack, what it awaits (a task, gather,
sleep, asyncio Lock/Event/Queue, an executor job and its thread), await
cycles and loops blocked by a synchronous call inside a coroutine."""
    name = "py-tasks"

    def run(self, argv):
        no_arguments(self.name, "asyncio tasks", argv)
        print(facts.analysed().render(self.name))
