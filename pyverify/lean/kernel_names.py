"""Names the Lean 4 kernel treats specially: the development may declare none of them.

The kernel trusts some constants by name, not by their definitions
(``src/kernel/type_checker.cpp`` and ``src/kernel/inductive.cpp`` in
leanprover/lean4; the GMP acceleration is documented in
leanprover/reference-manual issue 365):

* **Nat literals and arithmetic.** A literal ``5`` has type ``Nat``;
  ``Nat.zero``/``Nat.succ`` convert to and from literals, and ``Nat.add``,
  ``Nat.sub``, ``Nat.mul``, ``Nat.div``, ``Nat.mod``, ``Nat.gcd``, ``Nat.pow``,
  ``Nat.beq``, ``Nat.ble``, ``Nat.land``, ``Nat.lor``, ``Nat.xor``,
  ``Nat.shiftLeft``, ``Nat.shiftRight`` (and ``Nat.log2`` in newer kernels)
  applied to literals are computed with GMP, whatever their definitions say.
  A development that declares its own ``Nat`` and a wrong ``Nat.add`` gets
  ``rfl`` proofs of false equations, and from them ``False``, with no axiom.
* **String literals.** A string literal has type ``String`` and unfolds to
  ``String.ofList`` of ``List.cons Char (Char.ofNat n) ...``, built by name
  and never type-checked.
* **Native reduction.** ``Lean.reduceBool`` / ``Lean.reduceNat`` run compiled
  code inside the kernel.
* **Quotients.** ``Quot``, ``Quot.mk``, ``Quot.lift``, ``Quot.ind`` get their
  own reduction rule once ``init_quot`` runs.

The core of this development (``PrefixPool/Core.lean``) names its numbers
``Natural`` for exactly this reason. It does declare ``Bool``, ``List`` and
``Eq``, which the kernel also names, but only as the *results* of the
reductions above (``Bool.true`` from ``Nat.beq``, ``List.cons`` inside a
string literal, ``Eq`` when ``init_quot`` runs): with every name below absent,
none of those reductions can fire.

The check asks Lean itself (``#print NAME`` must answer "Unknown constant"),
so a declaration hidden from a source scanner (inside a namespace, by a
macro) is still refused.
"""

from __future__ import annotations

#: name -> why the kernel treats it specially (one phrase)
KERNEL_NAMES: dict[str, str] = {
    "Nat": "the type of numeric literals",
    "Nat.zero": "converted to and from numeric literals",
    "Nat.succ": "converted to and from numeric literals",
    **{
        f"Nat.{op}": "computed with GMP on literals, whatever its definition says"
        for op in (
            "add",
            "sub",
            "mul",
            "div",
            "mod",
            "gcd",
            "pow",
            "beq",
            "ble",
            "land",
            "lor",
            "xor",
            "shiftLeft",
            "shiftRight",
            "log2",
        )
    },
    "String": "the type of string literals",
    "String.ofList": "a string literal unfolds to it, unchecked",
    "String.mk": "a string literal unfolds to it in older kernels, unchecked",
    "Char": "string literals unfold to lists of it, unchecked",
    "Char.ofNat": "string literals unfold to it, unchecked",
    "Lean.reduceBool": "the kernel runs compiled code for it",
    "Lean.reduceNat": "the kernel runs compiled code for it",
    "Lean.ofReduceBool": "the axiom behind native reduction",
    "Lean.ofReduceNat": "the axiom behind native reduction",
    "Lean.trustCompiler": "the axiom behind native reduction",
    "Quot": "quotients have their own kernel reduction",
    "Quot.mk": "quotients have their own kernel reduction",
    "Quot.lift": "quotients have their own kernel reduction",
    "Quot.ind": "quotients have their own kernel reduction",
}

#: Namespaces a source may not open or declare into (a cheap early refusal; the
#: sound check is the Lean-side probe of :data:`KERNEL_NAMES`).
RESERVED_NAMESPACES = ("Nat", "String", "Char", "Lean", "Quot")
