//! The approval scope: which sprints of the plan the human approves for development.
//! Given as text (`all`, `sprint 1`, `sprints 1-2`, `1, 3`), kept as sprint numbers that
//! the approved plan has.

use super::session::Sprint;

/// Why a scope was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeError {
    /// Words other than sprint numbers (`the first one`).
    Unreadable,
    /// Numbers the plan does not have.
    NotInPlan(Vec<u32>),
}

/// The sprint numbers a scope names, checked against the plan's sprints. `all` (or no
/// scope) is every sprint of the plan; a plan without sprint headings can only be
/// approved whole.
pub fn read(scope: &str, plan: &[Sprint]) -> Result<Vec<u32>, ScopeError> {
    let text = scope.trim().to_lowercase();
    let all = || plan.iter().map(|s| s.number).collect();
    if text.is_empty() || text == "all" || text == "all sprints" {
        return Ok(all());
    }
    let mut numbers: Vec<u32> = Vec::new();
    let words = text
        .split(|c: char| c.is_whitespace() || c == ',' || c == '&' || c == '+' || c == ';')
        .filter(|w| !w.is_empty());
    let mut range_from: Option<u32> = None;
    for word in words {
        match word {
            "sprint" | "sprints" | "and" | "only" => continue,
            "to" | "through" | "-" | "–" => {
                // A range word needs a number on each side.
                range_from = Some(numbers.pop().ok_or(ScopeError::Unreadable)?);
                continue;
            }
            _ => {}
        }
        let (lo, hi) = match word.split_once(['-', '–']) {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(word)?;
                (range_from.take().unwrap_or(n), n)
            }
        };
        if hi < lo || hi - lo > 1000 {
            return Err(ScopeError::Unreadable);
        }
        numbers.extend(lo..=hi);
    }
    if range_from.is_some() {
        return Err(ScopeError::Unreadable);
    }
    numbers.sort_unstable();
    numbers.dedup();
    if numbers.is_empty() {
        return Err(ScopeError::Unreadable);
    }
    let missing: Vec<u32> = numbers
        .iter()
        .copied()
        .filter(|n| !plan.iter().any(|s| s.number == *n))
        .collect();
    if missing.is_empty() {
        Ok(numbers)
    } else {
        Err(ScopeError::NotInPlan(missing))
    }
}

fn number(word: &str) -> Result<u32, ScopeError> {
    let digits = word.strip_prefix('#').unwrap_or(word);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ScopeError::Unreadable);
    }
    digits.parse().map_err(|_| ScopeError::Unreadable)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(n: u32) -> Vec<Sprint> {
        (1..=n)
            .map(|number| Sprint {
                number,
                title: format!("S{number}"),
            })
            .collect()
    }

    #[test]
    fn scopes_name_sprints_of_the_plan() {
        let p = plan(3);
        let ok = [
            ("all", vec![1, 2, 3]),
            ("  ALL ", vec![1, 2, 3]),
            ("", vec![1, 2, 3]),
            ("sprint 1", vec![1]),
            ("Sprint 2", vec![2]),
            ("sprints 1-2", vec![1, 2]),
            ("sprints 1 to 3", vec![1, 2, 3]),
            ("1, 3", vec![1, 3]),
            ("sprint 1 and sprint 3", vec![1, 3]),
            ("sprint #2", vec![2]),
            ("3,1,1", vec![1, 3]),
        ];
        for (scope, want) in ok {
            assert_eq!(read(scope, &p), Ok(want), "{scope:?}");
        }
        let refused = [
            ("sprint 4", ScopeError::NotInPlan(vec![4])),
            ("sprints 2-5", ScopeError::NotInPlan(vec![4, 5])),
            ("the first one", ScopeError::Unreadable),
            ("sprint", ScopeError::Unreadable),
            ("sprint 1.5", ScopeError::Unreadable),
            ("3-1", ScopeError::Unreadable),
            ("1-99999999", ScopeError::Unreadable),
            ("sprints 1 to", ScopeError::Unreadable),
            ("to 3", ScopeError::Unreadable),
            ("99999999999", ScopeError::Unreadable),
        ];
        for (scope, want) in refused {
            assert_eq!(read(scope, &p), Err(want), "{scope:?}");
        }
        // A plan without sprint headings is approved whole or not at all.
        assert_eq!(read("all", &[]), Ok(vec![]));
        assert_eq!(read("sprint 1", &[]), Err(ScopeError::NotInPlan(vec![1])));
    }
}
