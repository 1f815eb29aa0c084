//! A person as a team's repository knows them: the name and email git has for them
//! (`user.name`, `user.email`), or what `BMAD_OWNER` says. Who owns a session and who took a
//! decision are recorded as one; `list`'s `mine` compares them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Characters kept of a name or an email.
const MAX_PART: usize = 120;

/// The most characters of a [`Person::handle`].
pub const MAX_HANDLE: usize = 12;

/// A person: at least one of the two is present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Person {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

impl Person {
    /// A person from a name and an email, each trimmed and cut short; `None` when both are
    /// empty.
    pub fn new(name: Option<&str>, email: Option<&str>) -> Option<Person> {
        let clean = |s: Option<&str>| {
            s.map(|s| s.trim().chars().filter(|c| !c.is_control()).take(MAX_PART))
                .map(|c| c.collect::<String>())
                .filter(|s| !s.is_empty())
        };
        let (name, email) = (clean(name), clean(email));
        (name.is_some() || email.is_some()).then_some(Person { name, email })
    }

    /// A person as written by hand (`BMAD_OWNER`, a flag): `Name <email>`, `email@host` or
    /// a name.
    pub fn parse(text: &str) -> Option<Person> {
        let text = text.trim();
        if let Some((name, rest)) = text.split_once('<') {
            if let Some(email) = rest.strip_suffix('>') {
                return Person::new(Some(name), Some(email));
            }
        }
        if text.contains('@') && !text.contains(char::is_whitespace) {
            return Person::new(None, Some(text));
        }
        Person::new(Some(text), None)
    }

    /// Whether `self` and `other` are the same person: the same email (in any case) when
    /// both have one, else the same name.
    pub fn is(&self, other: &Person) -> bool {
        match (&self.email, &other.email) {
            (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
            _ => self.name.is_some() && self.name == other.name,
        }
    }

    /// A short handle for task names: the first word of the name, else the email's local
    /// part, lowercased ASCII letters and digits only (at most 12); `None` when nothing is
    /// left.
    pub fn handle(&self) -> Option<String> {
        let from_name = self
            .name
            .as_deref()
            .and_then(|n| n.split_whitespace().next());
        let from_email = self.email.as_deref().and_then(|e| e.split('@').next());
        [from_name, from_email]
            .into_iter()
            .flatten()
            .find_map(|raw| {
                let h: String = slug::slugify(raw)
                    .chars()
                    .filter(char::is_ascii_alphanumeric)
                    .take(MAX_HANDLE)
                    .collect();
                (!h.is_empty()).then_some(h)
            })
    }
}

impl std::fmt::Display for Person {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.name, &self.email) {
            (Some(n), Some(e)) => write!(f, "{n} <{e}>"),
            (Some(n), None) => f.write_str(n),
            (None, Some(e)) => f.write_str(e),
            (None, None) => f.write_str("?"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_person_is_read_in_the_forms_people_write() {
        let p = Person::parse(" Ada Lovelace <ada@example.org> ").unwrap();
        assert_eq!(p.name.as_deref(), Some("Ada Lovelace"));
        assert_eq!(p.email.as_deref(), Some("ada@example.org"));
        assert_eq!(p.to_string(), "Ada Lovelace <ada@example.org>");
        let e = Person::parse("ada@example.org").unwrap();
        assert_eq!(
            (e.name, e.email.as_deref()),
            (None, Some("ada@example.org"))
        );
        let n = Person::parse("Ada").unwrap();
        assert_eq!((n.name.as_deref(), n.email), (Some("Ada"), None));
        assert_eq!(Person::parse("  "), None);
        assert_eq!(
            Person::parse("x\u{7}y").unwrap().name.as_deref(),
            Some("xy")
        );
    }

    #[test]
    fn the_same_person_is_told_by_email_else_by_name() {
        let a = Person::parse("Ada <ADA@example.org>").unwrap();
        let b = Person::parse("A. Lovelace <ada@example.org>").unwrap();
        let c = Person::parse("Ada <other@example.org>").unwrap();
        assert!(a.is(&b));
        assert!(!a.is(&c));
        assert!(Person::parse("Ada").unwrap().is(&a));
        assert!(!Person::parse("Bob").unwrap().is(&a));
    }

    #[test]
    fn handles_are_short_lowercase_words() {
        let h = |t: &str| Person::parse(t).unwrap().handle();
        assert_eq!(h("Ada Lovelace <ada@x.org>").as_deref(), Some("ada"));
        assert_eq!(h("jean.luc@x.org").as_deref(), Some("jeanluc"));
        assert_eq!(h("Zoë").as_deref(), Some("zoe"));
        assert_eq!(h("Bartholomew-Montgomery").as_deref(), Some("bartholomewm"));
        assert_eq!(h("!!! <?@x>"), None);
    }
}
