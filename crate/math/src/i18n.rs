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
    /// Both, in the order their names are listed (`error::Named` parses them: this module sits
    /// below the errors).
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    /// `en` or `zh`: the language's name in URLs and options.
    pub fn name(self) -> &'static str {
        self.pick("en", "zh")
    }

    /// `en` or `zh`, whichever this language is.
    pub fn pick<T>(self, en: T, zh: T) -> T {
        match self {
            Lang::En => en,
            Lang::Zh => zh,
        }
    }
}

/// `before` then `after` in Chinese prose: a space between a Latin letter or digit and a Chinese
/// character ("草稿 B 链"), none between two Chinese characters ("你的草稿链").
pub fn zh_join(before: &str, after: &str) -> String {
    let latin = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    match latin(before.chars().next_back()) || latin(after.chars().next()) {
        true => format!("{before} {after}"),
        false => format!("{before}{after}"),
    }
}
