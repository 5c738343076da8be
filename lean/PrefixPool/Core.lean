prelude
/-!
# PrefixPool.Core: the small core every proof here rests on

This development imports nothing, not even Lean's own library (`Init`): the file
starts with `prelude`. So it defines the few things its proofs need, here, in
plain terms: equality, `True`/`False`/`And`, booleans, natural numbers with
addition and `≤`, lists, pairs, and list membership decided by a boolean
equality. Everything is defined with the recursors Lean generates for each
inductive type (`Natural.rec`, `List.rec`, `Bool.rec`, ...), and every proof is a
term the kernel checks. There is no notation: `Eq a b` is `a = b`,
`Natural.le a b` is `a ≤ b`, `Natural.plus a b` is `a + b`.

The natural numbers are called `Natural`, not `Nat`: Lean's elaborator has
built-in shortcuts for a type named `Nat` (numerals, `n + 1` offsets) that
reach for Lean's library; under another name it treats them like any other
inductive type.

A reviewer must trust the Lean kernel and the definitions in this package
(this file, `PrefixPool/Distinct.lean` and the definitions in the modules
that state the theorems). The lemmas need not be trusted: the kernel checks them.
-/

-- The compiler would otherwise generate auxiliary constructions that need
-- more of Lean's library; none of them is used here.
set_option genCtorIdx false
set_option genInjectivity false
set_option genSizeOf false
set_option genSizeOfSpec false

universe u v w

/-- Demanded by Lean's code generator when it compiles an inductive type with
parameters. It is `unsafe`: the kernel refuses any theorem or ordinary
definition that mentions it, and `#print axioms` on every registered theorem
shows that none depends on any axiom. -/
unsafe axiom lcAny : Type

/-- Demanded by the code generator, like `lcAny`; unsafe and unused by any theorem. -/
unsafe axiom lcErased : Type

/-! ## Logic -/

/-- The true proposition. -/
inductive True : Prop where
  | intro : True

/-- The false proposition: no proof. -/
inductive False : Prop

/-- Conjunction. -/
inductive And (a b : Prop) : Prop where
  | intro (left : a) (right : b) : And a b

/-- Equality (`Eq a b` is `a = b`): the only proof is `Eq.refl`. -/
inductive Eq {α : Sort u} : α → α → Prop where
  | refl (a : α) : Eq a a

/-- `Exists p` is `∃ x, p x`. -/
inductive Exists {α : Sort u} (p : α → Prop) : Prop where
  | intro (w : α) (h : p w) : Exists p

theorem rfl {α : Sort u} {a : α} : Eq a a := Eq.refl a

theorem Eq.symm {α : Sort u} {a b : α} (h : Eq a b) : Eq b a :=
  Eq.rec (motive := fun x _ => Eq x a) rfl h

theorem Eq.trans {α : Sort u} {a b c : α} (h₁ : Eq a b) (h₂ : Eq b c) : Eq a c :=
  Eq.rec (motive := fun x _ => Eq a x) h₁ h₂

/-- Rewrite with an equation: from `a = b` and `motive a`, get `motive b`. -/
theorem Eq.subst {α : Sort u} {motive : α → Prop} {a b : α} (h₁ : Eq a b) (h₂ : motive a) :
    motive b :=
  Eq.rec (motive := fun x _ => motive x) h₂ h₁

theorem congrArg {α : Sort u} {β : Sort v} {a₁ a₂ : α} (f : α → β) (h : Eq a₁ a₂) :
    Eq (f a₁) (f a₂) :=
  Eq.rec (motive := fun x _ => Eq (f a₁) (f x)) rfl h

theorem congr2 {α : Sort u} {β : Sort v} {γ : Sort w} {a₁ a₂ : α} {b₁ b₂ : β}
    (f : α → β → γ) (ha : Eq a₁ a₂) (hb : Eq b₁ b₂) : Eq (f a₁ b₁) (f a₂ b₂) :=
  Eq.trans (congrArg (fun x => f x b₁) ha) (congrArg (f a₂) hb)

theorem False.elim {C : Prop} (h : False) : C :=
  False.rec (motive := fun _ => C) h

theorem And.left {a b : Prop} (h : And a b) : a :=
  And.rec (motive := fun _ => a) (fun ha _ => ha) h

theorem And.right {a b : Prop} (h : And a b) : b :=
  And.rec (motive := fun _ => b) (fun _ hb => hb) h

/-! ## Booleans -/

inductive Bool : Type where
  | false : Bool
  | true : Bool

/-- `cond b t e` is `if b then t else e`. -/
noncomputable def cond {α : Sort u} (b : Bool) (t e : α) : α :=
  Bool.rec (motive := fun _ => α) e t b

/-- Boolean "or". -/
noncomputable def Bool.or (a b : Bool) : Bool := cond a Bool.true b

/-- Boolean "and". -/
noncomputable def Bool.and (a b : Bool) : Bool := cond a b Bool.false

theorem Bool.false_ne_true (h : Eq Bool.false Bool.true) : False :=
  @Eq.rec Bool Bool.false (fun x _ => Bool.rec (motive := fun _ => Prop) True False x)
    True.intro Bool.true h

/-- Case analysis on a boolean, remembering which case we are in. -/
theorem Bool.by_cases {motive : Bool → Prop} (b : Bool)
    (if_false : Eq b Bool.false → motive Bool.false)
    (if_true : Eq b Bool.true → motive Bool.true) : motive b :=
  Bool.rec (motive := fun x => Eq b x → motive x) if_false if_true b rfl

theorem Bool.or_assoc (a b c : Bool) :
    Eq (Bool.or (Bool.or a b) c) (Bool.or a (Bool.or b c)) :=
  Bool.rec (motive := fun a => Eq (Bool.or (Bool.or a b) c) (Bool.or a (Bool.or b c)))
    rfl rfl a

theorem Bool.or_true (a : Bool) : Eq (Bool.or a Bool.true) Bool.true :=
  Bool.rec (motive := fun a => Eq (Bool.or a Bool.true) Bool.true) rfl rfl a

/-! ## Natural numbers -/

inductive Natural : Type where
  | zero : Natural
  | succ (n : Natural) : Natural

/-- Addition, by recursion on the second argument. -/
noncomputable def Natural.plus (n m : Natural) : Natural :=
  Natural.rec (motive := fun _ => Natural) n (fun _ ih => Natural.succ ih) m

/-- `n ≤ m`: some `k` has `n + k = m`. -/
def Natural.le (n m : Natural) : Prop := Exists (fun k => Eq (Natural.plus n k) m)

/-- Boolean equality of natural numbers. -/
noncomputable def Natural.eqb (n m : Natural) : Bool :=
  Natural.rec (motive := fun _ => Natural → Bool)
    (fun m => Natural.rec (motive := fun _ => Bool) Bool.true (fun _ _ => Bool.false) m)
    (fun _ eqb_n m => Natural.rec (motive := fun _ => Bool) Bool.false (fun m' _ => eqb_n m') m)
    n m

/-- Boolean `n ≤ m`. -/
noncomputable def Natural.leb (n m : Natural) : Bool :=
  Natural.rec (motive := fun _ => Natural → Bool)
    (fun _ => Bool.true)
    (fun _ leb_n m => Natural.rec (motive := fun _ => Bool) Bool.false (fun m' _ => leb_n m') m)
    n m

/-- Boolean `n < m`. -/
noncomputable def Natural.ltb (n m : Natural) : Bool := Natural.leb (Natural.succ n) m

theorem Natural.zero_plus (n : Natural) : Eq (Natural.plus Natural.zero n) n :=
  Natural.rec (motive := fun n => Eq (Natural.plus Natural.zero n) n)
    rfl (fun _ ih => congrArg Natural.succ ih) n

theorem Natural.succ_plus (n m : Natural) : Eq (Natural.plus (Natural.succ n) m) (Natural.succ (Natural.plus n m)) :=
  Natural.rec (motive := fun m => Eq (Natural.plus (Natural.succ n) m) (Natural.succ (Natural.plus n m)))
    rfl (fun _ ih => congrArg Natural.succ ih) m

theorem Natural.plus_comm (n m : Natural) : Eq (Natural.plus n m) (Natural.plus m n) :=
  Natural.rec (motive := fun m => Eq (Natural.plus n m) (Natural.plus m n))
    (Eq.symm (Natural.zero_plus n))
    (fun m ih => Eq.trans (congrArg Natural.succ ih) (Eq.symm (Natural.succ_plus m n))) m

theorem Natural.plus_assoc (a b c : Natural) :
    Eq (Natural.plus (Natural.plus a b) c) (Natural.plus a (Natural.plus b c)) :=
  Natural.rec (motive := fun c => Eq (Natural.plus (Natural.plus a b) c) (Natural.plus a (Natural.plus b c)))
    rfl (fun _ ih => congrArg Natural.succ ih) c

theorem Natural.plus_left_comm (a b c : Natural) :
    Eq (Natural.plus a (Natural.plus b c)) (Natural.plus b (Natural.plus a c)) :=
  Eq.trans (Eq.symm (Natural.plus_assoc a b c))
    (Eq.trans (congrArg (fun x => Natural.plus x c) (Natural.plus_comm a b)) (Natural.plus_assoc b a c))

/-- `(a + b) + (c + d) = (a + c) + (b + d)`. -/
theorem Natural.plus_four (a b c d : Natural) :
    Eq (Natural.plus (Natural.plus a b) (Natural.plus c d)) (Natural.plus (Natural.plus a c) (Natural.plus b d)) :=
  Eq.trans (Natural.plus_assoc a b (Natural.plus c d))
    (Eq.trans (congrArg (Natural.plus a) (Natural.plus_left_comm b c d))
      (Eq.symm (Natural.plus_assoc a c (Natural.plus b d))))

theorem Natural.eqb_self (n : Natural) : Eq (Natural.eqb n n) Bool.true :=
  Natural.rec (motive := fun n => Eq (Natural.eqb n n) Bool.true) rfl (fun _ ih => ih) n

theorem Natural.eq_of_eqb (n m : Natural) : Eq (Natural.eqb n m) Bool.true → Eq n m :=
  Natural.rec (motive := fun n => ∀ m, Eq (Natural.eqb n m) Bool.true → Eq n m)
    (fun m => Natural.rec (motive := fun m => Eq (Natural.eqb Natural.zero m) Bool.true → Eq Natural.zero m)
      (fun _ => rfl)
      (fun _ _ h => False.elim (Bool.false_ne_true h)) m)
    (fun n ih m => Natural.rec (motive := fun m => Eq (Natural.eqb (Natural.succ n) m) Bool.true → Eq (Natural.succ n) m)
      (fun h => False.elim (Bool.false_ne_true h))
      (fun m' _ h => congrArg Natural.succ (ih m' h)) m)
    n m

theorem Natural.le_refl (n : Natural) : Natural.le n n := Exists.intro Natural.zero rfl

theorem Natural.zero_le (n : Natural) : Natural.le Natural.zero n := Exists.intro n (Natural.zero_plus n)

theorem Natural.plus_le_plus {a b c d : Natural} (h₁ : Natural.le a b) (h₂ : Natural.le c d) :
    Natural.le (Natural.plus a c) (Natural.plus b d) :=
  Exists.rec (motive := fun _ => Natural.le (Natural.plus a c) (Natural.plus b d))
    (fun k₁ e₁ => Exists.rec (motive := fun _ => Natural.le (Natural.plus a c) (Natural.plus b d))
      (fun k₂ e₂ => Exists.intro (Natural.plus k₁ k₂)
        (Eq.trans (Natural.plus_four a c k₁ k₂) (congr2 Natural.plus e₁ e₂)))
      h₂)
    h₁

/-- Rewrite both sides of `≤` with equations. -/
theorem Natural.le_of_eq_of_le {a b c d : Natural} (ha : Eq a b) (hc : Eq c d) (h : Natural.le a c) :
    Natural.le b d :=
  Eq.subst (motive := fun x => Natural.le b x) hc (Eq.subst (motive := fun x => Natural.le x c) ha h)

/-! ## Lists and pairs -/

inductive List (α : Type u) : Type u where
  | nil : List α
  | cons (head : α) (tail : List α) : List α

/-- `append xs ys` is `xs ++ ys`. -/
noncomputable def List.append {α : Type u} (xs ys : List α) : List α :=
  List.rec (motive := fun _ => List α) ys (fun x _ ih => List.cons x ih) xs

noncomputable def List.map {α : Type u} {β : Type v} (f : α → β) (xs : List α) : List β :=
  List.rec (motive := fun _ => List β) List.nil (fun x _ ih => List.cons (f x) ih) xs

/-- `elem eqb a xs`: does `a` occur in `xs`, comparing with `eqb`? -/
noncomputable def List.elem {α : Type u} (eqb : α → α → Bool) (a : α) (xs : List α) : Bool :=
  List.rec (motive := fun _ => Bool) Bool.false (fun x _ ih => Bool.or (eqb a x) ih) xs

theorem List.append_nil {α : Type u} (xs : List α) : Eq (List.append xs List.nil) xs :=
  List.rec (motive := fun xs => Eq (List.append xs List.nil) xs)
    rfl (fun x _ ih => congrArg (List.cons x) ih) xs

theorem List.elem_append {α : Type u} (eqb : α → α → Bool) (a : α) (xs ys : List α) :
    Eq (List.elem eqb a (List.append xs ys)) (Bool.or (List.elem eqb a xs) (List.elem eqb a ys)) :=
  List.rec
    (motive := fun xs =>
      Eq (List.elem eqb a (List.append xs ys)) (Bool.or (List.elem eqb a xs) (List.elem eqb a ys)))
    rfl
    (fun x xs ih => Eq.trans (congrArg (Bool.or (eqb a x)) ih)
      (Eq.symm (Bool.or_assoc (eqb a x) (List.elem eqb a xs) (List.elem eqb a ys))))
    xs

/-- `elem` after conditionally adding `x` to a list. -/
theorem List.elem_cond_cons {α : Type u} (eqb : α → α → Bool) (b : Bool) (a x : α)
    (xs : List α) (c : Bool) (h : Eq (List.elem eqb a xs) c) :
    Eq (List.elem eqb a (cond b (List.cons x xs) xs)) (Bool.or (Bool.and b (eqb a x)) c) :=
  Bool.rec
    (motive := fun b =>
      Eq (List.elem eqb a (cond b (List.cons x xs) xs)) (Bool.or (Bool.and b (eqb a x)) c))
    h (congrArg (Bool.or (eqb a x)) h) b

/-- A pair `Prod.mk a b`. -/
inductive Prod (α : Type u) (β : Type v) : Type (max u v) where
  | mk (fst : α) (snd : β) : Prod α β

noncomputable def Prod.fst {α : Type u} {β : Type v} (p : Prod α β) : α :=
  Prod.rec (motive := fun _ => α) (fun a _ => a) p

noncomputable def Prod.snd {α : Type u} {β : Type v} (p : Prod α β) : β :=
  Prod.rec (motive := fun _ => β) (fun _ b => b) p

/-! ## Boolean equality that decides equality -/

/-- `eqb` is a boolean equality that decides `Eq`. -/
def Lawful {α : Type u} (eqb : α → α → Bool) : Prop :=
  And (∀ a, Eq (eqb a a) Bool.true) (∀ a b, Eq (eqb a b) Bool.true → Eq a b)

theorem Natural.eqb_lawful : Lawful Natural.eqb := And.intro Natural.eqb_self Natural.eq_of_eqb

theorem Lawful.eqb_false_symm {α : Type u} {eqb : α → α → Bool} (hl : Lawful eqb) (a b : α)
    (h : Eq (eqb a b) Bool.false) : Eq (eqb b a) Bool.false :=
  Bool.by_cases (motive := fun x => Eq x Bool.false) (eqb b a)
    (fun _ => rfl)
    (fun ht => False.elim (Bool.false_ne_true (Eq.trans (Eq.symm h)
      (Eq.subst (motive := fun x => Eq (eqb a x) Bool.true)
        (Eq.symm (hl.right b a ht)) (hl.left a)))))

theorem Bool.and_left (a b : Bool) (h : Eq (Bool.and a b) Bool.true) : Eq a Bool.true :=
  Bool.rec (motive := fun a => Eq (Bool.and a b) Bool.true → Eq a Bool.true)
    (fun h => h) (fun _ => rfl) a h

theorem Bool.and_right (a b : Bool) (h : Eq (Bool.and a b) Bool.true) : Eq b Bool.true :=
  Bool.rec (motive := fun a => Eq (Bool.and a b) Bool.true → Eq b Bool.true)
    (fun h => False.elim (Bool.false_ne_true h)) (fun h => h) a h

/-- If `(a && b) || c` and `c` implies `d`, then `b || d`. -/
theorem Bool.or_and_imp (a b c d : Bool) (hcd : Eq c Bool.true → Eq d Bool.true)
    (h : Eq (Bool.or (Bool.and a b) c) Bool.true) : Eq (Bool.or b d) Bool.true :=
  Bool.rec (motive := fun a => Eq (Bool.or (Bool.and a b) c) Bool.true → Eq (Bool.or b d) Bool.true)
    (fun h => Eq.trans (congrArg (Bool.or b) (hcd h)) (Bool.or_true b))
    (Bool.rec (motive := fun b => Eq (Bool.or b c) Bool.true → Eq (Bool.or b d) Bool.true)
      (fun h => hcd h) (fun _ => rfl) b)
    a h

/-- Two pairs with equal components are equal. -/
theorem Prod.ext {α : Type u} {β : Type v} (p q : Prod α β) (h₁ : Eq (Prod.fst p) (Prod.fst q))
    (h₂ : Eq (Prod.snd p) (Prod.snd q)) : Eq p q :=
  Prod.rec
    (motive := fun p => ∀ q : Prod α β, Eq (Prod.fst p) (Prod.fst q) → Eq (Prod.snd p) (Prod.snd q) → Eq p q)
    (fun a b q => Prod.rec
      (motive := fun q => Eq a (Prod.fst q) → Eq b (Prod.snd q) → Eq (Prod.mk a b) q)
      (fun _ _ h₁ h₂ => congr2 Prod.mk h₁ h₂) q)
    p q h₁ h₂
