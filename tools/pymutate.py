"""Generated mutants of the reference client's protocol layer (``python/rwq/protocol/``).

A small AST mutator on the standard library only: this file is also the mutant adapter, and must
install its import hook before anything imports ``rwq``. Each mutant is one change of one node:

- ``num``: an int or float literal off by one, times 1000, divided by 1000;
- ``cmp``: a comparison flipped (``<`` ``<=``, ``>`` ``>=``, ``==`` ``!=``, ``is`` ``is not``,
  ``in`` ``not in``);
- ``while``: a ``while`` loop run as an ``if`` (its body once);
- ``arg-drop`` / ``arg-swap``: an argument of a call dropped, two adjacent ones swapped;
- ``flag``: a bool literal negated, a keyword argument naming a bool parameter forced to
  ``True`` or ``False``;
- ``error``: a raised or caught error class replaced by one with another code;
- ``bound``: a slice bound or a ``range`` end that is not a literal, plus or minus one.

Ids are ``py/<file>/<function>/<operator>/<hash>[~n]``: the hash is of the original and mutated
snippets, ``~n`` numbers identical mutants of one function, so an edit elsewhere keeps ids.

    python tools/pymutate.py --mutant ID            # the reference adapter with mutant ID
    python tools/pymutate.py --coverage DATA_FILE   # the reference adapter under coverage.py
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PROTOCOL = ROOT / "python" / "rwq" / "protocol"
FILES = (
    "validation.py",
    "operations.py",
    "commands.py",
    "declared.py",
    "sharding.py",
    "scripts.py",
    "live.py",
    "stats.py",
    "cron.py",
    "periodic.py",
)
"""The mutated modules of ``PROTOCOL``: every other one is in ``SKIPPED``, with its reason."""
SKIPPED = {
    "acl.py": "ACL rules for `rwq acl` (cli_queue.py): no adapter call reaches them, the suite "
    "cannot see them by design (tests/test_acl.py covers them against a real Redis)",
    "__init__.py": "re-exports only, no logic",
}
CASE_FILE_ENV = "RWQ_GENMUT_CASE_FILE"
"""In coverage mode: a file holding the label of the case the runner is running (the context)."""

# A raised or caught error class -> one with another error code (rwq/errors.py).
ERROR_SWAPS = {
    "InvalidArgument": "LeaseLost",
    "InvalidType": "WrongType",
    "LeaseLost": "InvalidArgument",
    "WrongType": "InvalidArgument",
    "ShardMismatch": "InvalidArgument",
    "NotReplicated": "RedisFailure",
    "RedisFailure": "NotReplicated",
    "NoPermission": "RedisFailure",
    "UnsupportedServer": "RedisFailure",
    "PolicyMissing": "InvalidArgument",
    "ShardCountUnrecorded": "RedisFailure",
}
COMPARE_FLIPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}


@dataclass(frozen=True)
class Mutant:
    """One generated mutant: where, which operator, and the snippet before and after."""

    id: str
    file: str
    function: str
    operator: str
    line: int
    original: str
    mutated: str
    source_hash: str
    """Hash of the enclosing function's (or module statement's) source: a change re-runs it."""
    lines: tuple[str, ...]
    """The lines (``file:line``) whose coverage selects the cases to run (for a module-level name:
    the lines that read it)."""


@dataclass(frozen=True)
class _Where:
    function: str
    scope: ast.AST
    lines: tuple[str, ...] | None


_Change = tuple[str, str, Callable[[], None]]
_Add = Callable[[str, ast.AST, str, str, Callable[[], None]], None]


@dataclass
class _Site:
    function: str
    operator: str
    node: ast.AST
    original: str
    mutated: str
    apply: Callable[[], None]
    scope: ast.AST
    lines: tuple[str, ...]


def _unparse(node: ast.AST) -> str:
    return ast.unparse(node) if isinstance(node, ast.AST) else repr(node)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 160 else text[:157] + "..."


def _bool_params(trees: Sequence[ast.Module]) -> frozenset[str]:
    """Names of the parameters annotated ``bool`` in the protocol layer: the flags to force."""
    names = set()
    for tree in trees:
        for node in ast.walk(tree):
            annotation = getattr(node, "annotation", None)
            if not (isinstance(annotation, ast.Name) and annotation.id == "bool"):
                continue
            if isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
    return frozenset(names)


class _Walker:
    """Collects the mutation sites of one module, in a fixed order."""

    def __init__(
        self, name: str, tree: ast.Module, flags: frozenset[str], usages: dict[str, tuple[str, ...]]
    ) -> None:
        self.name = name
        self.tree = tree
        self.flags = flags
        self.usages = usages
        self.sites: list[_Site] = []
        self.skip: set[int] = set()
        self._mark_skipped(tree)

    def _mark_skipped(self, tree: ast.Module) -> None:
        """Docstrings, annotations, ``__slots__`` and ``TYPE_CHECKING`` blocks: not behaviour."""
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            first = body[0] if isinstance(body, list) and body else None
            text = (
                first.value.value
                if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                else 0
            )
            if first is not None and isinstance(text, str):
                self._skip_tree(first)
            for field in ("annotation", "returns"):
                sub = getattr(node, field, None)
                if isinstance(sub, ast.AST):
                    self._skip_tree(sub)
            if isinstance(node, ast.If) and _unparse(node.test) == "TYPE_CHECKING":
                self._skip_tree(node)
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets
            ):
                self._skip_tree(node)

    def _skip_tree(self, node: ast.AST) -> None:
        self.skip.update(id(sub) for sub in ast.walk(node))

    def run(self) -> list[_Site]:
        for statement in self.tree.body:
            self._visit(statement, "<module>", statement, self._module_lines(statement))
        return self.sites

    def _module_lines(self, statement: ast.stmt) -> tuple[str, ...]:
        names = [
            t.id for t in ast.walk(statement) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
        ]
        lines = sorted({line for name in names for line in self.usages.get(name, ())})
        return tuple(lines)

    def _visit(
        self, node: ast.AST, function: str, scope: ast.AST, scope_lines: tuple[str, ...] | None
    ) -> None:
        if isinstance(node, ast.ClassDef):
            for decorator in node.decorator_list:
                self._visit(decorator, function, scope, scope_lines)
            for statement in node.body:
                name = f"{node.name}" if function == "<module>" else f"{function}.{node.name}"
                lines = scope_lines if function != "<module>" else None
                if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                    lines = self._class_lines(statement, node.name)
                self._visit(statement, name, statement, lines)
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = node.name if function in ("<module>",) else f"{function}.{node.name}"
            end = (node.end_lineno or node.lineno) + 1
            body_lines = tuple(f"{self.name}:{line}" for line in range(node.body[0].lineno, end))
            for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
                self._visit(default, name, node, body_lines)
            for decorator in node.decorator_list:
                self._visit(decorator, function, scope, scope_lines)
            for statement in node.body:
                self._visit(statement, name, node, None)
            return
        if id(node) not in self.skip:
            self._sites(node, function, scope, scope_lines)
        for child in ast.iter_child_nodes(node):
            self._visit(child, function, scope, scope_lines)

    def _class_lines(self, statement: ast.stmt, owner: str) -> tuple[str, ...]:
        """A class-level statement (a field default, an enum value) is used wherever its name is
        read, and wherever its class is (``FailOutcome(code)`` reads every value)."""
        names = [
            t.id for t in ast.walk(statement) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
        ]
        return tuple(sorted({line for name in [*names, owner] for line in self.usages.get(name, ())}))

    def _add(self, where: _Where, operator: str, node: ast.AST, change: _Change) -> None:
        lines = where.lines
        if lines is None:
            start = getattr(node, "lineno", 1)
            end = (getattr(node, "end_lineno", None) or start) + 1
            lines = tuple(f"{self.name}:{line}" for line in range(start, end))
        before, after, apply = change
        self.sites.append(_Site(where.function, operator, node, before, after, apply, where.scope, lines))

    def _adder(self, function: str, scope: ast.AST, lines: tuple[str, ...] | None) -> _Add:
        where = _Where(function, scope, lines)

        def add(operator: str, node: ast.AST, before: str, after: str, apply: Callable[[], None]) -> None:
            self._add(where, operator, node, (before, after, apply))

        return add

    def _sites(self, node: ast.AST, function: str, scope: ast.AST, lines: tuple[str, ...] | None) -> None:
        add = self._adder(function, scope, lines)
        value = node.value if isinstance(node, ast.Constant) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            candidates: list[int | float] = [value + 1, value - 1, value * 1000]
            candidates.append(value // 1000 if isinstance(value, int) else value / 1000)
            for new in dict.fromkeys(candidates):
                if new != value:
                    add("num", node, repr(value), repr(new), _setter(node, "value", new))
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            add("flag", node, repr(node.value), repr(not node.value), _setter(node, "value", not node.value))
        elif isinstance(node, ast.Compare):
            for index, op in enumerate(node.ops):
                flipped = COMPARE_FLIPS.get(type(op))
                if flipped is None:
                    continue
                before = _unparse(node)
                new_ops = list(node.ops)
                new_ops[index] = flipped()
                after = _unparse(ast.Compare(node.left, new_ops, node.comparators))
                add("cmp", node, before, after, _setter(node, "ops", new_ops))
        elif isinstance(node, ast.While):
            add("while", node, f"while {_unparse(node.test)}:", f"if {_unparse(node.test)}:", lambda: None)
            self.sites[-1].apply = _while_to_if(self.tree, node)
        elif isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(target, ast.Name) and target.id in ERROR_SWAPS:
                swap = ERROR_SWAPS[target.id]
                add("error", node, f"raise {target.id}", f"raise {swap}", _setter(target, "id", swap))
            self._skip_tree(node.exc)  # arguments of an error are its message
        elif isinstance(node, ast.ExceptHandler) and node.type is not None:
            names = [node.type] if isinstance(node.type, ast.Name) else getattr(node.type, "elts", [])
            for name in names:
                if isinstance(name, ast.Name) and name.id in ERROR_SWAPS:
                    swap = ERROR_SWAPS[name.id]
                    add("error", node, f"except {name.id}", f"except {swap}", _setter(name, "id", swap))
        elif isinstance(node, ast.Call):
            self._call_sites(node, function, scope, lines)
        elif isinstance(node, ast.Slice):
            for field in ("lower", "upper"):
                bound = getattr(node, field)
                if bound is None or isinstance(bound, ast.Constant):
                    continue
                for arith, sign in ((ast.Add(), "+"), (ast.Sub(), "-")):
                    shifted = ast.BinOp(bound, arith, ast.Constant(1))
                    add(
                        "bound",
                        node,
                        f"[{field}] {_unparse(bound)}",
                        f"[{field}] {_unparse(bound)} {sign} 1",
                        _setter(node, field, shifted),
                    )

    def _call_sites(
        self, node: ast.Call, function: str, scope: ast.AST, lines: tuple[str, ...] | None
    ) -> None:
        add = self._adder(function, scope, lines)
        name = _unparse(node.func)
        if name in ("isinstance", "type", "super", "len", "repr", "str", "cast") or name.endswith(".warn"):
            return
        args = node.args
        if name == "range" and args:
            end = len(args) - 1 if len(args) <= 2 else 1
            bound = args[end]
            if not isinstance(bound, ast.Constant):
                for op in (ast.Add(), ast.Sub()):
                    new_args = list(args)
                    new_args[end] = ast.BinOp(bound, op, ast.Constant(1))
                    add(
                        "bound",
                        node,
                        _unparse(node),
                        _unparse(ast.Call(node.func, new_args, node.keywords)),
                        _setter(node, "args", new_args),
                    )
        for index in range(len(args)):
            new_args = args[:index] + args[index + 1 :]
            after = _unparse(ast.Call(node.func, new_args, node.keywords))
            add("arg-drop", node, _unparse(node), after, _setter(node, "args", new_args))
        for index in range(len(args) - 1):
            left, right = args[index], args[index + 1]
            if (
                isinstance(left, ast.Starred)
                or isinstance(right, ast.Starred)
                or _unparse(left) == _unparse(right)
            ):
                continue
            new_args = [*args[:index], right, left, *args[index + 2 :]]
            after = _unparse(ast.Call(node.func, new_args, node.keywords))
            add("arg-swap", node, _unparse(node), after, _setter(node, "args", new_args))
        for index, keyword in enumerate(node.keywords):
            if keyword.arg is None:
                continue
            new_keywords = node.keywords[:index] + node.keywords[index + 1 :]
            after = _unparse(ast.Call(node.func, node.args, new_keywords))
            add("arg-drop", node, _unparse(node), after, _setter(node, "keywords", new_keywords))
            if keyword.arg in self.flags and not isinstance(keyword.value, ast.Constant):
                for forced in (True, False):
                    new_keywords = list(node.keywords)
                    new_keywords[index] = ast.keyword(keyword.arg, ast.Constant(forced))
                    after = _unparse(ast.Call(node.func, node.args, new_keywords))
                    add("flag", node, _unparse(node), after, _setter(node, "keywords", new_keywords))


def _setter(node: ast.AST, field: str, value: Any) -> Callable[[], None]:
    def apply() -> None:
        setattr(node, field, value)
        ast.fix_missing_locations(node)

    return apply


def _while_to_if(tree: ast.Module, loop: ast.While) -> Callable[[], None]:
    def apply() -> None:
        for parent in ast.walk(tree):
            for field, value in ast.iter_fields(parent):
                if isinstance(value, list) and any(item is loop for item in value):
                    index = next(i for i, item in enumerate(value) if item is loop)
                    value[index] = ast.copy_location(ast.If(loop.test, loop.body, loop.orelse), loop)
                    setattr(parent, field, value)
                    return

    return apply


def _parse(name: str) -> ast.Module:
    return ast.parse((PROTOCOL / name).read_text(), filename=str(PROTOCOL / name))


def _usages(trees: dict[str, ast.Module]) -> dict[str, tuple[str, ...]]:
    """Name -> the lines (``file:line``, any protocol file) that read it: what runs a module-level
    or class-level definition (a constant, a field default) after import."""
    reads: dict[str, set[str]] = {}
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                reads.setdefault(node.id, set()).add(f"{name}:{node.lineno}")
            elif isinstance(node, ast.Attribute):
                reads.setdefault(node.attr, set()).add(f"{name}:{node.lineno}")
            elif isinstance(node, ast.keyword) and node.arg:
                reads.setdefault(node.arg, set()).add(f"{name}:{node.value.lineno}")
    return {key: tuple(sorted(value)) for key, value in reads.items()}


def _digest(*parts: str) -> str:
    return hashlib.sha1("\x00".join(parts).encode()).hexdigest()[:8]


def _sites(name: str, trees: dict[str, ast.Module]) -> list[_Site]:
    flags = _bool_params(list(trees.values()))
    return _Walker(name, trees[name], flags, _usages(trees)).run()


def generate(files: Sequence[str] = FILES, trees: dict[str, ast.Module] | None = None) -> list[Mutant]:
    """Every mutant of ``files``, in a fixed order, with stable ids."""
    trees = trees or {name: _parse(name) for name in FILES}
    mutants: list[Mutant] = []
    for name in files:
        seen: dict[str, int] = {}
        for site in _sites(name, trees):
            stem = f"py/{name}/{site.function}/{site.operator}/{_digest(site.original, site.mutated)}"
            ordinal = seen.get(stem, 0)
            seen[stem] = ordinal + 1
            mutant_id = stem if ordinal == 0 else f"{stem}~{ordinal}"
            mutants.append(
                Mutant(
                    mutant_id,
                    f"python/rwq/protocol/{name}",
                    site.function,
                    site.operator,
                    getattr(site.node, "lineno", 0),
                    _short(site.original),
                    _short(site.mutated),
                    _digest(ast.dump(site.scope)),
                    site.lines,
                )
            )
    return mutants


def mutated_tree(mutant_id: str) -> tuple[str, ast.Module]:
    """The module ``mutant_id`` changes (its file name) and its tree with the change applied."""
    name = mutant_id.split("/")[1]
    trees = {file: _parse(file) for file in FILES}
    ids = [mutant.id for mutant in generate((name,), trees)]
    if mutant_id not in ids:
        raise SystemExit(f"no generated mutant {mutant_id}")
    _sites(name, trees)[ids.index(mutant_id)].apply()
    return name, trees[name]


class _MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves one protocol module from a mutated tree instead of its file."""

    def __init__(self, fullname: str, path: Path, tree: ast.Module) -> None:
        self.fullname = fullname
        self.path = path
        self.code = compile(ast.fix_missing_locations(tree), str(path), "exec")

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.fullname:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=str(self.path))

    def exec_module(self, module: types.ModuleType) -> None:
        module.__file__ = str(self.path)
        exec(self.code, module.__dict__)


def install(mutant_id: str) -> None:
    """Make ``import rwq.protocol.<module>`` load the mutated module (nothing is written)."""
    name, tree = mutated_tree(mutant_id)
    finder = _MutantFinder(f"rwq.protocol.{name.removesuffix('.py')}", PROTOCOL / name, tree)
    sys.meta_path.insert(0, finder)


def serve_with_coverage(data_file: str) -> None:
    """The reference adapter under coverage.py, one dynamic context per case: the label the
    runner's driver writes to ``$RWQ_GENMUT_CASE_FILE`` before each case."""
    import coverage  # noqa: PLC0415 - coverage must start before rwq is imported

    cov = coverage.Coverage(data_file=data_file, data_suffix=True, include=[str(PROTOCOL / "*.py")])
    cov.start()
    from rwq.conformance import reference_adapter  # noqa: PLC0415

    label_file = Path(os.environ[CASE_FILE_ENV])
    label = ""
    adapter = reference_adapter.Adapter()
    protocol_out = sys.stdout
    sys.stdout = sys.stderr
    try:
        for line in sys.stdin:
            current = label_file.read_text()
            if current != label:
                label = current
                cov.switch_context(label)
            protocol_out.write(json.dumps(adapter.handle(line), separators=(",", ":")) + "\n")
            protocol_out.flush()
            cov.save()  # a killed adapter (a case's kill step) keeps what it covered
            if adapter.done:
                return
        adapter.reset({})
    finally:
        cov.stop()
        cov.save()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--mutant", help="serve the reference adapter with this generated mutant")
    group.add_argument("--coverage", help="serve the reference adapter under coverage.py into this data file")
    group.add_argument("--list", action="store_true", help="print every mutant id")
    args = parser.parse_args(argv)
    if args.list:
        for mutant in generate():
            print(mutant.id, mutant.line, mutant.original, "->", mutant.mutated)
    elif args.coverage:
        serve_with_coverage(args.coverage)
    else:
        install(args.mutant)
        from rwq.conformance import reference_adapter  # noqa: PLC0415

        reference_adapter.main()


if __name__ == "__main__":
    main()
