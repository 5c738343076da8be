"""The ``pyverify`` command.

Each subcommand family is a module in :mod:`pyverify.commands` with a
``register(subparsers)`` function that adds its parser and sets
``func`` to a handler ``handler(args) -> int``. This module only assembles
them and turns failures into one line on stderr:

* :class:`~pyverify.errors.UserError` (bad input): exit status 2;
* :class:`~pyverify.errors.CheckFailed` (a check that ran and failed): 1;
* an operating-system error (a full disk, a read-only folder): 2, naming the file;
* Ctrl-C: 130; SIGTERM: 143. Both unwind normally, so every command's
  clean-up runs and no partial output is left behind.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import signal
import sys
from contextlib import contextmanager
from typing import Iterator

from pyverify import __version__
from pyverify.commands.argtypes import did_you_mean, refuse_writing_inputs
from pyverify.errors import CheckFailed, RequestError, UserError, shown


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that clean-up runs as for Ctrl-C."""


#: The last signal that interrupted this run (SIGINT or SIGTERM), if any. An
#: extension module being imported when the signal arrives (OR-Tools, for one)
#: may turn the KeyboardInterrupt into an ImportError; this says what happened.
received: list[int] = []


#: How long to wait before raising a signal again that arrived inside a finalizer.
RETRY_SECONDS = 0.005


def _in_finalizer(frame) -> bool:
    """Whether ``frame`` runs inside a ``__del__``, where Python prints and drops any exception."""
    while frame is not None:
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


@contextmanager
def signals_unwind() -> Iterator[None]:
    """While inside, SIGINT raises KeyboardInterrupt and SIGTERM :class:`Terminated`, and both are remembered.

    A signal that lands inside a finalizer (an extension object's ``__del__``,
    as Z3's are) would be printed as "Exception ignored" and lost, and the run
    would go on; there it is raised again a few milliseconds later instead
    (SIGALRM), once the finalizer has returned. Once a signal has stopped the
    run, finalizers that fail while it unwinds (an object whose ``__init__``
    the signal cut short: Z3's then says it has no ``ctx``) are not reported:
    the one line saying the run was stopped is what the user reads.
    """

    can_retry = hasattr(
        signal, "setitimer"
    )  # not on Windows: there the signal is raised where it lands

    def stop(signum, frame):
        if can_retry and _in_finalizer(frame):
            signal.setitimer(signal.ITIMER_REAL, RETRY_SECONDS)
            return
        raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()

    def on_signal(signum, frame):
        received.append(signum)
        stop(signum, frame)

    def on_retry(signum, frame):
        stop(received[-1], frame)

    handlers = {signal.SIGINT: on_signal, signal.SIGTERM: on_signal}
    if can_retry:
        handlers[signal.SIGALRM] = on_retry
    try:
        previous = {signum: signal.signal(signum, handler) for signum, handler in handlers.items()}
    except ValueError:  # not the main thread (e.g. called from a test runner's worker)
        yield
        return
    report_unraisable = sys.unraisablehook

    def quiet_once_stopped(unraisable) -> None:
        if not received:
            report_unraisable(unraisable)

    sys.unraisablehook = quiet_once_stopped
    try:
        yield
    finally:
        if can_retry:
            signal.setitimer(signal.ITIMER_REAL, 0)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        sys.unraisablehook = report_unraisable


def command_modules() -> list:
    """Every module in :mod:`pyverify.commands` that defines ``register``.

    Each module may set ``ORDER`` (an int) to place its commands in --help;
    adding a command family is adding a module, with no list to keep in sync.
    """
    import pkgutil  # here, not at the top: a run names its command and imports only that module

    import pyverify.commands as package

    modules = [
        importlib.import_module(f"{package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(package.__path__)
    ]
    modules = [module for module in modules if hasattr(module, "register")]
    return sorted(modules, key=lambda module: (getattr(module, "ORDER", 100), module.__name__))


class _Parser(argparse.ArgumentParser):
    """argparse, but bad flags exit 2 with one line (no usage dump), suggesting the closest name for a typo.

    Suggestions are made here, for every Python version, rather than by
    argparse's own ``suggest_on_error`` (new in Python 3.14), so that every
    version says the same thing.
    """

    def parse_known_args(self, args=None, namespace=None):
        # Refuse unknown arguments in the (sub)command that met them, which knows its own flags:
        # 'pyverify simulate ... --capcity 3' is the simulate parser's to answer, with its --capacity.
        namespace, extras = super().parse_known_args(args, namespace)
        if not hasattr(namespace, "command_prog"):  # the innermost (sub)command parses first
            namespace.command_prog = self.prog  # 'pyverify trace import': how its errors begin
        if extras:
            flags = [option for action in self._actions for option in action.option_strings]
            typo = next((extra.split("=")[0] for extra in extras if extra.startswith("--")), None)
            self.error(
                f"unrecognized arguments: {' '.join(extras)}"
                + (did_you_mean(typo, flags) if typo else "")
            )
        # Flags that cannot go together are refused here, before any input is read (a trace can
        # take seconds): each command module registers its rules with argtypes.add_flag_check.
        for check in getattr(self, "flag_checks", ()):
            try:
                problem = check(namespace)
            except UserError as error:
                problem = str(error)
            if problem:
                self.error(problem)
        return namespace, extras

    def error(self, message: str) -> None:  # type: ignore[override]
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if choice:
            message += did_you_mean(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)))
        missing = re.match(r"the following arguments are required: (.*)$", message)
        if missing and self._reads_standard_input(missing.group(1).split(", ")):
            # 'pyverify simulate < trace.jsonl' reads nothing: the input is named, '-' for stdin.
            message += " (a file, or - to read standard input)"
        self.exit(2, f"{self.prog}: error: {message}\n")

    def _reads_standard_input(self, names: list[str]) -> bool:
        """Whether a positional argument in ``names`` takes ``-`` for standard input (its help says so)."""
        return any(
            "standard input" in (action.help or "")
            for action in self._actions
            if not action.option_strings and (action.metavar or action.dest) in names
        )


#: The module of :mod:`pyverify.commands` that registers each command, so that running one command imports
#: and builds only its own parser: importing every command module and building all 16 parsers took 25-30 ms
#: of a 0.27 s ``simulate`` on the 288k-reference Mooncake trace (bench/startup.py). A command missing here
#: (a new module's) is still found, by building them all, as are ``--help`` and typos; tests/test_startup.py
#: checks this table against what the modules register.
COMMAND_MODULES = {
    "validate": "basic",
    "simulate": "basic",
    "sweep": "basic",
    "audit": "audit",
    "budgets": "budgets",
    "tree": "tree",
    "certify": "certs",
    "verify": "certs",
    "bounded-check": "certs",
    "trace": "traces",
    "mrc": "traces",
    "replay": "replay",
    "cost": "cost",
    "lean": "lean",
    "bridge": "bridge",
    "check-events": "engine_check",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or with ``command`` (a name in :data:`COMMAND_MODULES`) only that command's module's."""
    parser = _Parser(
        prog="pyverify",
        description="Check claims about prefix (KV) cache reuse in an LLM inference fleet.",
    )
    parser.add_argument("--version", action="version", version=f"pyverify {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    if command in COMMAND_MODULES:
        modules = [importlib.import_module(f"pyverify.commands.{COMMAND_MODULES[command]}")]
    else:
        modules = command_modules()
    for module in modules:
        module.register(subparsers)
    return parser


def _stopped_by_signal() -> int:
    """Say once that a signal stopped the run; the exit status for it (128 + the signal)."""
    terminated = bool(received) and received[-1] == signal.SIGTERM
    if not reported:
        reported.append(True)
        print(
            f"pyverify: {'terminated' if terminated else 'interrupted'}; nothing partial was left behind",
            file=sys.stderr,
        )
    return 143 if terminated else 130


reported: list[bool] = []


def out_of_memory(argv: list[str]) -> str:
    """What ran out, and the limits to change: the one line a ``MemoryError`` ends a command with."""
    import resource

    from pyverify.inputs.jsonread import MAX_INPUT_ENV, max_input_bytes

    words = [
        word for word in argv[:2] if not word.startswith("-") and "." not in word
    ]  # no flag, no file
    command = " ".join(["pyverify", *words])
    try:
        cap = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (OSError, ValueError):
        cap = resource.RLIM_INFINITY
    held = (
        "the machine's memory"
        if cap == resource.RLIM_INFINITY
        else f"the address-space limit of {cap} bytes (ulimit -v)"
    )
    try:
        bound = f"{max_input_bytes()} bytes"
    except UserError:
        bound = "a bound"
    return (
        f"out of memory: {shown(command, 80)} needed more than {held}; "
        f"each input may hold {bound} after decompression ({MAX_INPUT_ENV}): "
        "lower it to refuse such inputs at once, lower the flags that size the run "
        "(--capacity, --fleet, ...), or allow more memory"
    )


def main(argv: list[str] | None = None) -> int:
    received.clear()
    reported.clear()
    prog = (
        "pyverify"  # once the command is known, its errors name it: 'pyverify simulate: error: ...'
    )
    with signals_unwind():
        try:
            words = sys.argv[1:] if argv is None else argv
            if not words:  # 'pyverify' alone: its help, as a usage error (status 2, on stderr)
                build_parser().print_help(sys.stderr)
                return 2
            # The command is the first word (the top-level flags, --help and --version, come before it, and
            # whatever follows it is the command's): then only its module is imported and its parser built.
            args = build_parser(words[0] if words else None).parse_args(argv)
            prog = args.command_prog
            refuse_writing_inputs(args)  # before any work: no output may replace an input
            return int(args.func(args) or 0)
        except UserError as error:
            if isinstance(error, RequestError):  # named as its file names it, not as the model does
                from pyverify.inputs.locate import relocated

                error = relocated(error)
            print(
                f"{prog}: error: {shown(error, None)}", file=sys.stderr
            )  # one line, whatever the message holds
            return 2
        except CheckFailed as failure:
            print(f"{prog}: refused: {shown(failure, None)}", file=sys.stderr)
            return 1
        except (KeyboardInterrupt, Terminated):
            return _stopped_by_signal()
        except BrokenPipeError:
            return 0
        except OSError as error:  # the machine said no: a full disk, a read-only folder
            where = f"{shown(error.filename)}: " if getattr(error, "filename", None) else ""
            print(f"{prog}: error: {where}{shown(error.strerror or error, None)}", file=sys.stderr)
            return 2
        except RecursionError:
            print(f"{prog}: error: input nested too deeply to process", file=sys.stderr)
            return 2
        except MemoryError:  # the frames holding the memory are gone by now: a line can be written
            print(f"{prog}: error: {out_of_memory(words)}", file=sys.stderr)
            return 2
        except Exception:
            if received:  # a signal surfaced as another exception (an interrupted extension import)
                return _stopped_by_signal()
            raise


def entry() -> None:
    """The ``pyverify`` program: :func:`main`, then exit with its status.

    A signal that arrives while :func:`main` is returning (after its handlers
    are restored) still ends in one line and 130/143, never a traceback; once
    the status is known, further signals are ignored while the process exits.
    """
    try:
        status = main()
    except (KeyboardInterrupt, Terminated):
        status = _stopped_by_signal()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
    if received:
        sys.unraisablehook = lambda unraisable: (
            None
        )  # as inside signals_unwind: the run was stopped
        # Stopped by a signal: everything was cleaned up while unwinding. Leave
        # without interpreter finalisation, where an extension's own pending
        # interrupt could still end the process by the signal (status -2).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    _leave(status)


def _leave(status: int) -> None:
    """Exit with ``status``, without the interpreter's teardown when nothing is left for it to do.

    Python's finalisation frees every module, function and array one object at a time before the process
    ends, which the operating system does at once: on the 288k-reference Mooncake conversation trace it was
    14 ms of a 150 ms ``simulate``. What finalisation does besides freeing is done here first: the ``atexit``
    functions run (temporary directories, logging, coverage) and both streams are flushed. When that cannot
    be finished here (another thread, not a daemon, still running, which Python would wait for; a stream
    that will not flush, as into a closed pipe), the ordinary exit runs instead.
    """
    import atexit
    import threading

    if any(
        thread.is_alive() and not thread.daemon
        for thread in threading.enumerate()
        if thread is not threading.main_thread()
    ):
        sys.exit(status)
    atexit._run_exitfuncs()  # noqa: SLF001 (the documented atexit functions, run as finalisation would)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(status)
    os._exit(status)


if __name__ == "__main__":
    entry()
