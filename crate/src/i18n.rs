//! The two languages of the page (the lecture is Chinese). A view that writes prose takes a
//! [`Lang`] in its parameters and picks each text with [`Lang::pick`]; English is the default,
//! and what the CLI prints.

/// A language of the page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lang {
    #[default]
    En,
    Zh,
}

impl Lang {
    /// `en` or `zh`, whichever this language is.
    pub fn pick<T>(self, en: T, zh: T) -> T {
        match self {
            Lang::En => en,
            Lang::Zh => zh,
        }
    }

    /// The language named `en` or `zh` (a name that is neither is rejected by
    /// `error::parse_lang`: this module sits below the errors).
    pub fn from_name(name: &str) -> Option<Lang> {
        match name {
            "en" => Some(Lang::En),
            "zh" => Some(Lang::Zh),
            _ => None,
        }
    }
}
