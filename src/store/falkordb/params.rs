//! Query parameters, sent as the `CYPHER name=value ...` prefix of `GRAPH.QUERY`. Values are
//! encoded as Cypher literals here and nowhere else: a string is quoted with its quotes and
//! backslashes escaped, so whatever it holds stays data.

use std::fmt::Write;

/// A parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    Null,
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Param>),
    /// Keys are code-supplied identifiers, never user data.
    Map(Vec<(&'static str, Param)>),
}

impl From<&str> for Param {
    fn from(s: &str) -> Self {
        Param::Str(s.to_string())
    }
}

impl From<String> for Param {
    fn from(s: String) -> Self {
        Param::Str(s)
    }
}

impl From<i64> for Param {
    fn from(n: i64) -> Self {
        Param::Int(n)
    }
}

impl From<Option<i64>> for Param {
    fn from(n: Option<i64>) -> Self {
        n.map_or(Param::Null, Param::Int)
    }
}

impl Param {
    fn write(&self, out: &mut String) {
        match self {
            Param::Null => out.push_str("null"),
            Param::Int(n) => {
                let _ = write!(out, "{n}");
            }
            // Non-finite values have no literal; callers validate them away first.
            Param::Float(x) if !x.is_finite() => out.push_str("null"),
            Param::Float(x) => {
                let _ = write!(out, "{x:?}");
            }
            Param::Str(s) => {
                out.push('"');
                for c in s.chars() {
                    match c {
                        '\\' => out.push_str("\\\\"),
                        '"' => out.push_str("\\\""),
                        c => out.push(c),
                    }
                }
                out.push('"');
            }
            Param::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Param::Map(entries) => {
                out.push('{');
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(key);
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}

/// `CYPHER a=1 b="x" <template>`; the template itself is always a constant.
pub fn with_params(template: &'static str, params: &[(&'static str, Param)]) -> String {
    if params.is_empty() {
        return template.to_string();
    }
    let mut out = String::from("CYPHER");
    for (name, value) in params {
        out.push(' ');
        out.push_str(name);
        out.push('=');
        value.write(&mut out);
    }
    out.push(' ');
    out.push_str(template);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_only_quotes_and_backslashes() {
        let q = with_params(
            "RETURN $s",
            &[("s", Param::from("a\"b\\c\nd\") DETACH DELETE n //"))],
        );
        assert_eq!(
            q,
            "CYPHER s=\"a\\\"b\\\\c\nd\\\") DETACH DELETE n //\" RETURN $s"
        );
    }

    #[test]
    fn nested_values() {
        let p = Param::List(vec![Param::Map(vec![
            ("fp", Param::from("A")),
            ("n", Param::Int(-3)),
            ("c", Param::Float(0.9)),
            ("x", Param::Null),
        ])]);
        assert_eq!(
            with_params("RETURN $l", &[("l", p)]),
            "CYPHER l=[{fp:\"A\",n:-3,c:0.9,x:null}] RETURN $l"
        );
    }

    #[test]
    fn no_params_is_the_bare_template() {
        assert_eq!(with_params("RETURN 1", &[]), "RETURN 1");
    }
}
