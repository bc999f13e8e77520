//! Context checks for built-in rules. The `regex` crate has no look-around, so every
//! "not preceded by" / "not followed by" / "is this really an address" decision lives here.

use std::net::Ipv6Addr;
use std::ops::Range;

use regex::Captures;

/// The character just before byte `i`.
fn before(text: &str, i: usize) -> Option<char> {
    text.get(..i)?.chars().next_back()
}

/// The character at byte `i` and the one after it.
fn after(text: &str, i: usize) -> (Option<char>, Option<char>) {
    let mut rest = text.get(i..).unwrap_or_default().chars();
    (rest.next(), rest.next())
}

/// ASCII only: text in scripts written without spaces (`服务器10.0.0.1宕机`) still gets
/// its addresses and numbers hidden.
fn is_word(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_digit(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_ascii_digit())
}

/// `.5` or `-5` right after a match: the match is the head of a longer dotted/dashed number.
fn continues_number(text: &str, end: usize) -> bool {
    let (next, then) = after(text, end);
    matches!(next, Some('.' | '-')) && is_digit(then)
}

fn group(caps: &Captures<'_>, i: usize) -> Option<Range<usize>> {
    caps.get(i).map(|m| m.range())
}

/// The whole match.
pub(crate) fn whole(_text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    group(caps, 0)
}

/// Group 1 of the match: the value after a kept prefix such as `AccountKey=`.
pub(crate) fn first_group(_text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    group(caps, 1)
}

/// The password of `scheme://user:password@`, unless it is already the placeholder.
pub(crate) fn url_password(_text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let password = caps.get(2)?;
    (password.as_str() != "<password>").then(|| password.range())
}

/// The token after `Bearer`, unless it reads like prose ("Bearer authentication"): a
/// token has at least 8 characters and either a non-letter or at least 24 letters.
pub(crate) fn bearer_token(_text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let token = caps.get(1)?;
    let s = token.as_str();
    let looks_like_token =
        s.len() >= 8 && (s.len() >= 24 || !s.chars().all(|c| c.is_ascii_alphabetic()));
    looks_like_token.then(|| token.range())
}

/// A dotted quad with every octet ≤ 255 that is not part of a version: not preceded by
/// `v` or `N.` (`v10.4.1.2`, `1.10.4.1.2`) nor followed by `.N` (`10.4.1.2.5`).
pub(crate) fn ipv4(text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let m = caps.get(0)?;
    let octets_ok = m.as_str().split('.').all(|o| o.parse::<u8>().is_ok());
    let prev = before(text, m.start());
    // `v10.4.1.2`: a word character before (`v`) already rules it out below.
    let versioned = prev == Some('.') && is_digit(before(text, m.start().saturating_sub(1)));
    let (next, then) = after(text, m.end());
    let longer = next == Some('.') && is_digit(then);
    (octets_ok && !versioned && !longer && !is_word(prev) && !is_word(next)).then(|| m.range())
}

/// A candidate run of hex groups and colons that parses as an IPv6 address, stands alone
/// (no word character, `:` or `.` glued to it, so `std::vector` and `12:30:45.5` stay),
/// and is not `::` alone. Runs with no decimal digit need three groups, so C++-ish
/// `a::b` / `dead::beef` stay too.
pub(crate) fn ipv6(text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let m = caps.get(0)?;
    let s = m.as_str();
    let prev = before(text, m.start());
    let (next, _) = after(text, m.end());
    let glued =
        is_word(prev) || matches!(prev, Some(':' | '.')) || is_word(next) || next == Some(':');
    if glued || continues_number(text, m.end()) || s.parse::<Ipv6Addr>().is_err() {
        return None;
    }
    let groups = s.split(':').filter(|g| !g.is_empty()).count();
    let has_digit = s.chars().any(|c| c.is_ascii_digit());
    (groups >= 3 || (groups >= 1 && has_digit)).then(|| m.range())
}

const PHONE_SEPARATORS: [char; 4] = [' ', '.', '-', '('];
const E164_MAX_DIGITS: usize = 15;

/// `+` and 8–15 digits (10–15 when written without separators, so `+15000000` stays a
/// count), not glued to a word or a number before the `+`. A run that is too long or glued
/// to a word after it is trimmed a group at a time from the right, whitespace-separated
/// groups first, so a number followed by a count or another number still gets hidden.
pub(crate) fn e164(text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let m = caps.get(0)?;
    let prev = before(text, m.start());
    if is_word(prev) || prev == Some('+') {
        return None;
    }
    let digits = |s: &str| s.chars().filter(char::is_ascii_digit).count();
    let mut number = m.as_str();
    while digits(number) > E164_MAX_DIGITS || is_word(after(text, m.start() + number.len()).0) {
        let body = number.get(1..)?;
        let cut = body
            .rfind(char::is_whitespace)
            .or_else(|| body.rfind(PHONE_SEPARATORS))?
            + 1;
        number = number.get(..cut)?.trim_end_matches(PHONE_SEPARATORS);
    }
    let compact = number.get(1..)?.chars().all(|c| c.is_ascii_digit());
    let min = if compact { 10 } else { 8 };
    (digits(number) >= min).then(|| m.start()..m.start() + number.len())
}

/// A North American number: `(555) 123-4567`, `555-123-4567`, `555.123.4567`, optionally
/// after `1-`. The two separators of the dashed/dotted form agree (so `555-123.4567` stays)
/// and the number is not part of a longer dashed or dotted run (dates, ids, versions).
pub(crate) fn nanp(text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let m = caps.get(0)?;
    let area = caps.get(2)?;
    let exchange_sep = caps.get(3)?.as_str().chars().next();
    let area_sep = area
        .as_str()
        .chars()
        .next_back()
        .filter(|c| matches!(c, '-' | '.'));
    if area_sep.is_some() && area_sep != exchange_sep {
        return None;
    }
    let glued_before = |c: Option<char>| is_word(c) || matches!(c, Some('-' | '.' | '+' | '/'));
    let (next, _) = after(text, m.end());
    if is_word(next) || continues_number(text, m.end()) {
        return None;
    }
    match caps.get(1) {
        Some(prefix) if !glued_before(before(text, prefix.start())) => Some(m.range()),
        _ if !glued_before(before(text, area.start())) => Some(area.start()..m.end()),
        _ => None,
    }
}
