//! `string_enum!`: a closed set of values that travels as a snake_case string.
//!
//! One declaration gives the Rust enum, `as_str`, `parse` (with an `invalid_argument` error that
//! names the argument and lists the accepted values), `ALL`, `Display`, serde (the same string),
//! and — behind the off-by-default binding features — a uniffi enum (a Kotlin `enum class`), a
//! TypeScript string-literal union (tsify) and a Python `str` (pyo3). No binding spells a value
//! again.

/// Declares a string enum; see the module documentation.
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident as $argument:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        #[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
        #[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $text)] $variant ),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The snake_case name, the same in every language.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Self::$variant => $text ),+
                }
            }

            /// Parses the snake_case name. Anything else is `invalid_argument` naming the
            /// argument and the accepted values.
            pub fn parse(value: &str) -> Result<Self, $crate::ArgumentError> {
                match value {
                    $( $text => Ok(Self::$variant), )+
                    _ => Err($crate::ArgumentError::new(
                        $argument,
                        format!(
                            "unknown value {}; expected one of {}",
                            $crate::text::quote(value),
                            [$($text),+].join(", ")
                        ),
                    )),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        #[cfg(feature = "python")]
        impl<'py> pyo3::IntoPyObject<'py> for $name {
            type Target = pyo3::types::PyString;
            type Output = pyo3::Bound<'py, pyo3::types::PyString>;
            type Error = std::convert::Infallible;
            fn into_pyobject(self, py: pyo3::Python<'py>) -> Result<Self::Output, Self::Error> {
                Ok(pyo3::types::PyString::intern(py, self.as_str()).clone())
            }
        }

        #[cfg(feature = "python")]
        impl<'py> pyo3::IntoPyObject<'py> for &$name {
            type Target = pyo3::types::PyString;
            type Output = pyo3::Bound<'py, pyo3::types::PyString>;
            type Error = std::convert::Infallible;
            fn into_pyobject(self, py: pyo3::Python<'py>) -> Result<Self::Output, Self::Error> {
                (*self).into_pyobject(py)
            }
        }
    };
}

/// Derives for a result record: serde (camelCase for JS), and behind the binding features a
/// uniffi record (Kotlin data class), a TypeScript interface (tsify) and a frozen Python class
/// with read-only attributes (pyo3). `record! { from_py; … }` also takes the record from Python
/// (a copy; it must be `Clone`), for a record that a step type derived in the core carries (pyo3
/// builds each variant's constructor from its fields).
macro_rules! record {
    (@py [$($py:tt)*] $(#[$meta:meta])* pub struct $name:ident { $($body:tt)* }) => {
        $(#[$meta])*
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        #[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
        #[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
        #[cfg_attr(feature = "python", pyo3::pyclass(get_all, frozen, eq, $($py)* module = "royaltykit"))]
        pub struct $name { $($body)* }

        py_repr!($name);
    };
    (from_py; $($rest:tt)*) => {
        record!(@py [from_py_object,] $($rest)*);
    };
    ($($rest:tt)*) => {
        record!(@py [] $($rest)*);
    };
}

/// Derives for a record that holds a secret (a token): behind the `python` feature a frozen
/// Python class with read-only attributes whose `repr` is the type's redacting `Debug`. Kotlin
/// and JS wrap such types by hand, with their own redacting printers.
macro_rules! secret_record {
    ($(#[$meta:meta])* pub struct $name:ident { $($body:tt)* }) => {
        $(#[$meta])*
        #[cfg_attr(feature = "python", pyo3::pyclass(get_all, frozen, module = "royaltykit"))]
        pub struct $name { $($body)* }

        py_repr!($name);
    };
}

/// A Python `repr` from the type's `Debug` (which redacts secrets), behind the `python` feature.
macro_rules! py_repr {
    ($name:ident) => {
        #[cfg(feature = "python")]
        #[pyo3::pymethods]
        impl $name {
            fn __repr__(&self) -> String {
                format!("{self:?}")
            }
        }
    };
}

/// Derives for a machine's step type, declared once here for every binding: serde JSON tagged by
/// `step` (variants snake_case, fields camelCase), what crosses wasm to `lib.cjs`; a TypeScript
/// union (tsify); a frozen Python class per variant (pyo3, comparing by value) whose `repr` is
/// `Name.` and the type's `Debug`. The caller's attributes give `Debug`, `Clone`, `PartialEq` and,
/// where Kotlin takes the type as generated, the uniffi enum.
macro_rules! step_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $($body:tt)* }) => {
        $(#[$meta])*
        #[derive(serde::Serialize)]
        #[serde(tag = "step", rename_all = "snake_case", rename_all_fields = "camelCase")]
        #[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
        #[cfg_attr(feature = "python", pyo3::pyclass(frozen, eq, module = "royaltykit"))]
        pub enum $name { $($body)* }

        #[cfg(feature = "python")]
        #[pyo3::pymethods]
        impl $name {
            fn __repr__(&self) -> String {
                format!(concat!(stringify!($name), ".{:?}"), self)
            }
        }
    };
}
