"""No import cycle in mechinit/, probes/ and zoo/: every import statement is read, those inside functions
and under ``if TYPE_CHECKING:`` included (an annotation-only import still ties two modules together)."""

import ast
from pathlib import Path

ROOT = Path(__file__).parents[2]
PACKAGES = {"mechinit": ROOT / "mechinit", "mechinit.probes": ROOT / "probes", "mechinit.zoo": ROOT / "zoo"}


def modules() -> dict[str, Path]:
    found = {}
    for prefix, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            if "entries" in path.parts:
                continue
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([prefix, *parts])] = path
    return found


def _imports(tree: ast.AST, module: str, is_package: bool):
    def walk(node):
        for child in ast.iter_child_nodes(node):
            yield from walk_one(child)

    def walk_one(node):
        if isinstance(node, ast.Import):
            yield from ((a.name, []) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            yield base, [a.name for a in node.names]
        else:
            yield from walk(node)

    yield from walk(tree)


def graph() -> dict[str, set[str]]:
    mods = modules()
    edges = {}
    for name, path in mods.items():
        targets = set()
        for base, names in _imports(ast.parse(path.read_text()), name, path.name == "__init__.py"):
            submodules = [f"{base}.{n}" for n in names if f"{base}.{n}" in mods]
            # `from pkg import mod` imports mod; `from pkg import name` (or `import pkg`) runs pkg's __init__
            for imported in submodules + ([base] if len(submodules) < max(len(names), 1) else []):
                if imported in mods and imported != name:
                    targets.add(imported)
        edges[name] = targets
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_walker_sees_imports_inside_functions_and_finds_a_planted_cycle():
    tree = ast.parse("def f():\n    from mechinit.config import RunConfig\nif TYPE_CHECKING:\n    import mechinit.zoo\n")
    assert list(_imports(tree, "mechinit.x", False)) == [("mechinit.config", ["RunConfig"]), ("mechinit.zoo", [])]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle():
    edges = graph()
    assert len(edges) > 60 and "mechinit.tasks.anchor" in edges["mechinit.tasks"]
    assert cycles(edges) == []


def test_the_config_never_imports_a_task_module_and_tasks_never_import_the_config():
    edges = graph()
    task_modules = {m for m in edges if m == "mechinit.tasks" or m.startswith("mechinit.tasks.")}
    assert not any(m in task_modules for m in edges["mechinit.task_options"] | edges["mechinit.fields"])
    assert all("mechinit.config" not in edges[m] for m in task_modules)


def test_the_stage_packages_exist_and_no_module_is_over_400_lines():
    stages = {m for m in graph() if m.count(".") == 1 and (ROOT / "mechinit" / m.split(".")[1] / "__init__.py").is_file()}
    assert {"mechinit.model", "mechinit.training", "mechinit.runs", "mechinit.sweeps", "mechinit.tasks"} <= stages
    long = {str(p.relative_to(ROOT)): n for p in modules().values() if (n := len(p.read_text().splitlines())) > 400}
    assert long == {}
