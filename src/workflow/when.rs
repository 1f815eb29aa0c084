//! How a stored time is shown to a person: the minute in UTC and how long ago it was
//! ("2026-11-27 16:40 UTC, 12 min ago"), for the terminal and the dashboard alike. The
//! present is given, so that this stays free of a clock.

use chrono::{DateTime, Utc};

/// `at` (RFC 3339, as sessions and git write it) for a person, with how long before `now`;
/// a text that is not a time is returned as it is.
pub fn shown(at: &str, now: DateTime<Utc>) -> String {
    let Ok(t) = DateTime::parse_from_rfc3339(at.trim()) else {
        return at.to_string();
    };
    let t = t.with_timezone(&Utc);
    format!("{}, {}", t.format("%Y-%m-%d %H:%M UTC"), ago(t, now))
}

/// "just now", "12 min ago", "3 h ago", "2 days ago"; a time up to a minute after `now`
/// (two clocks a little apart) is "just now", a later one "in the future" (a clock ahead,
/// or a date written by hand: a claim dated 2099 is not "just now").
pub fn ago(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let secs = (now - t).num_seconds();
    if secs < -60 {
        return "in the future".into();
    }
    match secs.max(0) {
        0..=59 => "just now".into(),
        60..=3599 => format!("{} min ago", secs / 60),
        3600..=172_799 => format!("{} h ago", secs / 3600),
        _ => format!("{} days ago", secs / 86_400),
    }
}

/// As [`ago`], to the second under a minute ("40 s ago"): how old an answer kept from the
/// network is.
pub fn ago_in_seconds(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    match (now - t).num_seconds() {
        s @ 0..=59 => format!("{s} s ago"),
        _ => ago(t, now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_shown_to_the_minute_with_how_long_ago() {
        let now = DateTime::parse_from_rfc3339("2026-11-27T17:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            shown("2026-11-27T16:48:30.123Z", now),
            "2026-11-27 16:48 UTC, 11 min ago"
        );
        assert_eq!(
            shown("2026-11-27T18:00:00+01:00", now),
            "2026-11-27 17:00 UTC, just now"
        );
        assert_eq!(
            shown("2026-11-24T17:00:00Z", now),
            "2026-11-24 17:00 UTC, 3 days ago"
        );
        assert_eq!(
            shown("2026-11-27T12:00:00Z", now),
            "2026-11-27 12:00 UTC, 5 h ago"
        );
        assert_eq!(shown("yesterday", now), "yesterday");
        // A forged date, and a clock a little ahead.
        assert_eq!(
            shown("2099-01-01T00:00:00Z", now),
            "2099-01-01 00:00 UTC, in the future"
        );
        assert_eq!(
            shown("2026-11-27T17:00:30Z", now),
            "2026-11-27 17:00 UTC, just now"
        );
        let at = |t: &str| DateTime::parse_from_rfc3339(t).unwrap().with_timezone(&Utc);
        assert_eq!(ago_in_seconds(at("2026-11-27T16:59:20Z"), now), "40 s ago");
        assert_eq!(ago_in_seconds(at("2026-11-27T16:58:00Z"), now), "2 min ago");
    }
}
