"""Parse YAML text with bounds: nesting depth, expanded size (alias bombs), integer length.

``yaml.safe_load`` builds nothing dangerous, but it recurses once per nesting level (a
50,000-deep ``[[[[...`` is a ``RecursionError``), converts a 5,000-digit integer with
``int()`` (a ``ValueError`` past Python's 4,300-digit limit) and shares aliased nodes, so
nine lines of "billion laughs" expand to 10**9 values in the first code that walks the
result. :func:`load_bounded` refuses each before it happens, as :class:`RefusedYAML`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set

import yaml

#: Largest config file read (bytes).
MAX_CONFIG_BYTES = 1 << 20
#: Deepest nesting of mappings and sequences.
MAX_DEPTH = 64
#: Most values the document may expand to, counting every use of an alias in full.
MAX_EXPANDED_NODES = 100_000
#: Longest integer literal (digits).
MAX_INT_DIGITS = 100


class RefusedYAML(Exception):
    """A YAML document outside the bounds (the caller adds the file name)."""

    def __init__(
        self, problem: str, expected: str, found: str, fix: str, mark: Optional[yaml.Mark] = None
    ) -> None:
        super().__init__(problem)
        self.problem, self.expected, self.found, self.fix = problem, expected, found, fix
        self.where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""


class _BoundedLoader(yaml.SafeLoader):
    """``SafeLoader`` that counts nesting while composing and refuses long integers."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise RefusedYAML(
                    "nested too deeply",
                    expected=f"at most {MAX_DEPTH} levels of nested mappings and lists",
                    found=f"more than {MAX_DEPTH} levels",
                    fix="flatten the config",
                    mark=self.peek_event().start_mark,
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node: yaml.ScalarNode) -> Any:
        digits = sum(ch.isdigit() for ch in str(node.value))
        if digits > MAX_INT_DIGITS:
            raise RefusedYAML(
                "an integer too long",
                expected=f"integers of at most {MAX_INT_DIGITS} digits",
                found=f"an integer of {digits} digits",
                fix="write a sane number (or quote it to make it a string)",
                mark=node.start_mark,
            )
        return super().construct_yaml_int(node)


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)


def _children(node: yaml.Node) -> List[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def expanded_size(root: yaml.Node, limit: int = MAX_EXPANDED_NODES) -> int:
    """How many values ``root`` stands for once every alias is expanded (stops past ``limit``).

    Iterative post-order with a memo per node, so a shared node costs one visit however
    often it is used; the arithmetic is where a bomb shows (sizes multiply).

    Raises:
        RefusedYAML: a node contains itself (``a: &a [*a]``: PyYAML registers an anchor
            before composing its children, so the alias is the node itself). Such a value
            would expand forever, here and in any later walk of the config.
    """
    sizes: Dict[int, int] = {}
    started: Set[int] = set()  # expanded, not finished: a node met again in between is its own descendant
    stack: List[tuple] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if not children_done:
            if id(node) in started:
                raise RefusedYAML(
                    "an alias inside its own anchor (a cycle)",
                    expected="aliases to values defined before them",
                    found="a value that contains itself",
                    fix="remove the *alias from inside its &anchor",
                    mark=node.start_mark,
                )
            started.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
            continue
        total = 1 + sum(sizes.get(id(child), 0) for child in _children(node))
        sizes[id(node)] = min(total, limit + 1)
    return sizes[id(root)]


def load_bounded(text: str) -> Any:
    """Parse one YAML document like ``yaml.safe_load``, within the module's bounds.

    Raises:
        RefusedYAML: too deep, expands past :data:`MAX_EXPANDED_NODES`, an integer too long.
        yaml.YAMLError: malformed YAML.
    """
    loader = _BoundedLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:  # a guard: the depth check stops far earlier
            raise RefusedYAML(
                "nested too deeply",
                expected=f"at most {MAX_DEPTH} levels",
                found="more than Python can recurse",
                fix="flatten the config",
            ) from None
        if node is None:
            return None
        size = expanded_size(node)
        if size > MAX_EXPANDED_NODES:
            raise RefusedYAML(
                "too large once its aliases are expanded (an alias bomb?)",
                expected=f"at most {MAX_EXPANDED_NODES} values with every *alias counted",
                found=f"more than {MAX_EXPANDED_NODES}",
                fix="remove the nested &anchors/*aliases",
            )
        try:
            return loader.construct_document(node)
        except ValueError as exc:  # a value Python refuses to convert (defensive)
            raise RefusedYAML(
                "a value that cannot be converted",
                expected="plain YAML values",
                found=str(exc)[:200],
                fix="fix or quote the value",
            ) from None
    finally:
        loader.dispose()
