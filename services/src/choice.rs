//! Settings chosen by name on the command line, for enums defined in crates that know no clap.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

/// A gate setting chosen by name on the command line: each value, its name and its help.
/// The enums live in the gate (no clap there); this is how clap spells them.
pub trait Choice: Copy + Send + Sync + 'static {
    const CHOICES: &'static [(Self, &'static str, &'static str)];
}

/// The clap parser of a [`Choice`]: help and errors list the names, as `value_enum` does.
pub fn choice<T: Choice>() -> impl TypedValueParser<Value = T> {
    let names = T::CHOICES.iter().map(|&(_, name, help)| match help {
        "" => PossibleValue::new(name),
        help => PossibleValue::new(name).help(help),
    });
    PossibleValuesParser::new(names).try_map(|name: String| {
        T::CHOICES
            .iter()
            .find(|(_, known, _)| *known == name)
            .map(|&(value, _, _)| value)
            .ok_or_else(|| format!("`{name}` is not a known value"))
    })
}
