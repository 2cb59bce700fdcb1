//! serde's `rename_all` rules, replicated character for character from `serde_derive`
//! (`internals/case.rs`), so the schema names the same keys serde reads.

/// One `rename_all` rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RenameRule {
    /// No rule: names stay as written (minus `r#`).
    None,
    LowerCase,
    UpperCase,
    PascalCase,
    CamelCase,
    SnakeCase,
    ScreamingSnakeCase,
    KebabCase,
    ScreamingKebabCase,
}

/// The rule names serde accepts, in serde's order (used in the error message too).
const RULES: &[(&str, RenameRule)] = &[
    ("lowercase", RenameRule::LowerCase),
    ("UPPERCASE", RenameRule::UpperCase),
    ("PascalCase", RenameRule::PascalCase),
    ("camelCase", RenameRule::CamelCase),
    ("snake_case", RenameRule::SnakeCase),
    ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnakeCase),
    ("kebab-case", RenameRule::KebabCase),
    ("SCREAMING-KEBAB-CASE", RenameRule::ScreamingKebabCase),
];

/// Lowercases the first character (serde slices the first byte; identical for ASCII, and
/// serde itself rejects what would not be).
fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

impl RenameRule {
    /// Parses a rule name, or returns serde's error message.
    pub(crate) fn parse(name: &str) -> Result<Self, String> {
        RULES
            .iter()
            .find(|(rule, _)| *rule == name)
            .map(|(_, rule)| *rule)
            .ok_or_else(|| {
                let expected: Vec<String> = RULES.iter().map(|(n, _)| format!("{n:?}")).collect();
                format!(
                    "unknown rename rule `rename_all = {name:?}`, expected one of {}",
                    expected.join(", ")
                )
            })
    }

    /// The wire name of an enum variant.
    pub(crate) fn apply_to_variant(self, variant: &str) -> String {
        match self {
            Self::None | Self::PascalCase => variant.to_owned(),
            Self::LowerCase => variant.to_ascii_lowercase(),
            Self::UpperCase => variant.to_ascii_uppercase(),
            Self::CamelCase => lower_first(variant),
            Self::SnakeCase => {
                let mut snake = String::new();
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                snake
            }
            Self::ScreamingSnakeCase => Self::SnakeCase
                .apply_to_variant(variant)
                .to_ascii_uppercase(),
            Self::KebabCase => Self::SnakeCase.apply_to_variant(variant).replace('_', "-"),
            Self::ScreamingKebabCase => Self::ScreamingSnakeCase
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }

    /// The wire name of a struct field.
    pub(crate) fn apply_to_field(self, field: &str) -> String {
        match self {
            Self::None | Self::LowerCase | Self::SnakeCase => field.to_owned(),
            Self::UpperCase | Self::ScreamingSnakeCase => field.to_ascii_uppercase(),
            Self::PascalCase => {
                let mut pascal = String::new();
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        pascal.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        pascal.push(ch);
                    }
                }
                pascal
            }
            Self::CamelCase => lower_first(&Self::PascalCase.apply_to_field(field)),
            Self::KebabCase => field.replace('_', "-"),
            Self::ScreamingKebabCase => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

/// `WorkspaceState` → `workspace_state` (the companion module of a `#[tool_set]`).
pub(crate) fn snake_case(ident: &str) -> String {
    RenameRule::SnakeCase.apply_to_variant(ident)
}

/// `grep_files` → `GrepFiles` (the argument struct of a `#[tool_set]` method).
pub(crate) fn pascal_case(ident: &str) -> String {
    RenameRule::PascalCase.apply_to_field(ident)
}

#[cfg(test)]
mod tests {
    use super::RenameRule::{self, *};

    /// serde_derive's own table (`rename_variants`).
    #[test]
    fn variants_match_serde() {
        let table: &[[&str; 8]] = &[
            [
                "Outcome", "outcome", "OUTCOME", "outcome", "outcome", "OUTCOME", "outcome",
                "OUTCOME",
            ],
            [
                "VeryTasty",
                "verytasty",
                "VERYTASTY",
                "veryTasty",
                "very_tasty",
                "VERY_TASTY",
                "very-tasty",
                "VERY-TASTY",
            ],
            ["A", "a", "A", "a", "a", "A", "a", "A"],
            ["Z42", "z42", "Z42", "z42", "z42", "Z42", "z42", "Z42"],
        ];
        for row in table {
            let [
                original,
                lower,
                upper,
                camel,
                snake,
                screaming,
                kebab,
                screaming_kebab,
            ] = *row;
            assert_eq!(None.apply_to_variant(original), original);
            assert_eq!(LowerCase.apply_to_variant(original), lower);
            assert_eq!(UpperCase.apply_to_variant(original), upper);
            assert_eq!(PascalCase.apply_to_variant(original), original);
            assert_eq!(CamelCase.apply_to_variant(original), camel);
            assert_eq!(SnakeCase.apply_to_variant(original), snake);
            assert_eq!(ScreamingSnakeCase.apply_to_variant(original), screaming);
            assert_eq!(KebabCase.apply_to_variant(original), kebab);
            assert_eq!(
                ScreamingKebabCase.apply_to_variant(original),
                screaming_kebab
            );
        }
    }

    /// serde_derive's own table (`rename_fields`).
    #[test]
    fn fields_match_serde() {
        let table: &[[&str; 7]] = &[
            [
                "outcome", "OUTCOME", "Outcome", "outcome", "OUTCOME", "outcome", "OUTCOME",
            ],
            [
                "very_tasty",
                "VERY_TASTY",
                "VeryTasty",
                "veryTasty",
                "VERY_TASTY",
                "very-tasty",
                "VERY-TASTY",
            ],
            ["a", "A", "A", "a", "A", "a", "A"],
            ["z42", "Z42", "Z42", "z42", "Z42", "z42", "Z42"],
        ];
        for row in table {
            let [
                original,
                upper,
                pascal,
                camel,
                screaming,
                kebab,
                screaming_kebab,
            ] = *row;
            assert_eq!(None.apply_to_field(original), original);
            assert_eq!(UpperCase.apply_to_field(original), upper);
            assert_eq!(PascalCase.apply_to_field(original), pascal);
            assert_eq!(CamelCase.apply_to_field(original), camel);
            assert_eq!(SnakeCase.apply_to_field(original), original);
            assert_eq!(ScreamingSnakeCase.apply_to_field(original), screaming);
            assert_eq!(KebabCase.apply_to_field(original), kebab);
            assert_eq!(ScreamingKebabCase.apply_to_field(original), screaming_kebab);
        }
    }

    /// Quirks serde has and we must share: a field's `lowercase` keeps its case, a
    /// variant's `snake_case` splits before every uppercase letter.
    #[test]
    fn quirks_are_kept() {
        assert_eq!(LowerCase.apply_to_field("Mixed_Case"), "Mixed_Case");
        assert_eq!(SnakeCase.apply_to_variant("HTTPServer"), "h_t_t_p_server");
        assert_eq!(CamelCase.apply_to_field("_leading"), "leading");
        assert_eq!(PascalCase.apply_to_field("a__b"), "AB");
    }

    #[test]
    fn parses_every_rule_name_and_reports_the_rest() {
        assert_eq!(RenameRule::parse("kebab-case"), Ok(KebabCase));
        let err = RenameRule::parse("kebab").unwrap_err();
        assert!(err.starts_with(
            "unknown rename rule `rename_all = \"kebab\"`, expected one of \"lowercase\""
        ));
    }
}
