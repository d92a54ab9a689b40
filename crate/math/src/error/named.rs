//! A named choice declared once ([`choices!`]): its values, the name the CLI, the URL and the
//! page use for each, other spellings accepted, and what a value is, as an error names it. From
//! that one declaration come the `ALL` list, `name()`, parsing with the error that lists the
//! names ([`Named`]), and serde's reading and writing by the same names (so a parameter the page
//! sends, a JSON field the CLI writes and a `--flag value` are one spelling).

use super::{Error, Text};
use crate::i18n::Lang;
use std::fmt;

/// A named choice (a draft, a rule, a tree kind, a backend…): one list of every value and one
/// name each, from which parsing and the error's list of known names come (in both languages;
/// `presets` hands the page some of these lists, such as the verification rules). A type says what a value of it is (`WHAT`, as an error names it), lists its values and
/// names each; `parse` and `known` are written once, here.
pub trait Named: Copy + PartialEq + 'static {
    /// What a value is, as an error names it (`draft`, `verification`); it has a Chinese name
    /// (`noun_zh`, checked by a test).
    const WHAT: &'static str;

    /// Every value, in the order the known names are listed.
    fn all() -> &'static [Self];

    /// The name the CLI, the URL and the page use.
    fn key(self) -> &'static str;

    /// Other spellings accepted beside the name (`A`, `draft-a` for draft A).
    fn aliases(self) -> &'static [&'static str] {
        &[]
    }

    /// The value named `name` (or one of its aliases), else the error that lists the names.
    fn parse(name: &str) -> Result<Self, Error> {
        Self::all()
            .iter()
            .copied()
            .find(|v| v.key() == name || v.aliases().contains(&name))
            .ok_or_else(|| Error::Unknown {
                what: Self::WHAT,
                name: name.into(),
                known: Self::known(),
            })
    }

    /// The names, listed as an error lists them.
    fn known() -> Text {
        let names: Vec<&str> = Self::all().iter().map(|v| v.key()).collect();
        names.join(", ").into()
    }
}

/// Implements [`Named`] for a type that has an inherent `ALL` array and `name()` written by hand:
/// the few that [`choices!`] cannot declare (a language, which sits below the errors; a choice
/// with a variant that holds a value). `crate::error::named!(Lang, "language");`.
#[macro_export]
macro_rules! named {
    ($ty:ty, $what:literal) => {
        impl $crate::error::Named for $ty {
            const WHAT: &'static str = $what;
            fn all() -> &'static [Self] {
                &<$ty>::ALL
            }
            fn key(self) -> &'static str {
                self.name()
            }
        }
    };
}

/// Declares a choice once: the enum (with `Debug, Clone, Copy, PartialEq, Eq` derived, and
/// whatever else its attributes derive), its `ALL` list in the order given, `name()`, [`Named`]
/// (`WHAT` as an error names a value of it; each variant's aliases after `|`), and serde's
/// `Serialize`/`Deserialize` by the same names:
///
/// ```
/// specdec_math::choices! {
///     /// Where the weights live.
///     #[derive(Default)]
///     pub enum Place("offloading") {
///         #[default]
///         Gpu = "gpu" | "device",
///         Host = "host",
///     }
/// }
/// use specdec_math::error::Named;
/// assert_eq!(Place::parse("device").unwrap(), Place::Gpu);
/// assert_eq!(serde_json::to_string(&Place::ALL).unwrap(), r#"["gpu","host"]"#);
/// ```
#[macro_export]
macro_rules! choices {
    (
        $(#[$attr:meta])*
        $vis:vis enum $ty:ident($what:literal) {
            $( $(#[$vattr:meta])* $variant:ident = $name:literal $(| $alias:literal)* ),+ $(,)?
        }
    ) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $ty {
            $( $(#[$vattr])* $variant, )+
        }

        impl $ty {
            /// Every value, in the order the known names are listed.
            pub const ALL: [$ty; [$($name),+].len()] = [$($ty::$variant),+];

            /// The name the CLI, the URL and the page use.
            pub fn name(self) -> &'static str {
                match self {
                    $( $ty::$variant => $name, )+
                }
            }
        }

        impl $crate::error::Named for $ty {
            const WHAT: &'static str = $what;
            fn all() -> &'static [Self] {
                &<$ty>::ALL
            }
            fn key(self) -> &'static str {
                self.name()
            }
            fn aliases(self) -> &'static [&'static str] {
                match self {
                    $( $ty::$variant => &[$($alias),*], )+
                }
            }
        }

        impl $crate::error::__serde::Serialize for $ty {
            fn serialize<S: $crate::error::__serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> $crate::error::__serde::Deserialize<'de> for $ty {
            fn deserialize<D: $crate::error::__serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::error::deserialize(d)
            }
        }
    };
}

/// Reads a [`Named`] value from its name or an alias; an unknown name is refused with the
/// error that lists the names (in English: serde's errors carry no language).
pub fn deserialize<'de, T: Named, D: serde::Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    struct Visit<T>(std::marker::PhantomData<T>);
    impl<T: Named> serde::de::Visitor<'_> for Visit<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "a {} name ({})", T::WHAT, T::known().en)
        }
        fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<T, E> {
            T::parse(name).map_err(|e| E::custom(e.message(Lang::En)))
        }
    }
    d.deserialize_str(Visit(std::marker::PhantomData))
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::choices! {
        /// Two values, one with aliases.
        #[derive(Default, Hash)]
        enum Pick("mode") {
            One = "one" | "1" | "first",
            #[default]
            TwoWords = "two-words",
        }
    }

    #[test]
    fn a_declared_choice_lists_names_and_reads_them_back_through_serde_and_parse() {
        assert_eq!(Pick::ALL, [Pick::One, Pick::TwoWords]);
        assert_eq!(Pick::default(), Pick::TwoWords);
        assert_eq!(Pick::TwoWords.name(), "two-words");
        assert_eq!(<Pick as Named>::known().en, "one, two-words");
        // Written by name; read by name or alias, from JSON as from `parse`.
        assert_eq!(
            serde_json::to_string(&Pick::ALL).unwrap(),
            r#"["one","two-words"]"#
        );
        for (text, want) in [("one", Pick::One), ("first", Pick::One), ("1", Pick::One)] {
            assert_eq!(Pick::parse(text).unwrap(), want);
            let json = serde_json::to_string(text).unwrap();
            assert_eq!(serde_json::from_str::<Pick>(&json).unwrap(), want);
        }
        // An unknown name is the core's error, naming the value and the known names.
        let e = serde_json::from_str::<Pick>(r#""three""#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("three") && e.contains("one, two-words"), "{e}");
        assert_eq!(
            Pick::parse("three").unwrap_err().to_string(),
            e[..e.find(" at line").unwrap_or(e.len())]
        );
        // Not a string at all: serde says what was expected.
        let e = serde_json::from_str::<Pick>("3").unwrap_err().to_string();
        assert!(e.contains("a mode name (one, two-words)"), "{e}");
    }
}
