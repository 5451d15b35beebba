//! `when` conditions: the small, safe grammar of seed `002_…` ("Minimal Expression Grammar"),
//! parsed when a pipeline loads and evaluated over the run's context.
//!
//! ```text
//! expr     := and_expr ("||" and_expr)*
//! and_expr := cmp_expr ("&&" cmp_expr)*
//! cmp_expr := primary (("==" | "!=") primary)?
//! primary  := "(" expr ")" | value
//! value    := string | number | true | false | null | path | "{{" path "}}" | exists
//! exists   := "exists" "(" path ")"
//! path     := ident ("." (ident | digits))*
//! ```
//!
//! Strings take double or single quotes with `\` escapes. A path that leads nowhere is
//! `null`; `exists(p)` is true when `p` leads to a value other than `null`. Equality is JSON
//! equality, with numbers compared by value (`1 == 1.0`). A condition holds only when it
//! evaluates to `true`: a path to the string `"yes"` does not.

use std::fmt;

use serde_json::Value;

/// A parsed condition.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    source: String,
    expr: Expr,
}

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Equal { left: Box<Expr>, right: Box<Expr>, negated: bool },
    Literal(Value),
    Path(Vec<String>),
    Exists(Vec<String>),
}

/// Why a condition does not parse, with the character position (from 0) where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WhenError {
    pub at: usize,
    pub message: String,
}

impl fmt::Display for WhenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at character {}: {}", self.at, self.message)
    }
}

impl std::error::Error for WhenError {}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    LParen,
    RParen,
    Open,  // {{
    Close, // }}
    And,
    Or,
    Equal,
    NotEqual,
    Dot,
    Word(String),
    Str(String),
    Number(Value),
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Token::LParen => "'('".into(),
            Token::RParen => "')'".into(),
            Token::Open => "'{{'".into(),
            Token::Close => "'}}'".into(),
            Token::And => "'&&'".into(),
            Token::Or => "'||'".into(),
            Token::Equal => "'=='".into(),
            Token::NotEqual => "'!='".into(),
            Token::Dot => "'.'".into(),
            Token::Word(word) => format!("{word:?}"),
            Token::Str(text) => format!("the string {text:?}"),
            Token::Number(number) => format!("the number {number}"),
        }
    }
}

fn tokenize(source: &str) -> Result<Vec<(usize, Token)>, WhenError> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    let fail = |at: usize, message: String| Err(WhenError { at, message });
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let start = i;
        let token = match (c, next) {
            (c, _) if c.is_whitespace() => {
                i += 1;
                continue;
            }
            ('(', _) => Token::LParen,
            (')', _) => Token::RParen,
            ('.', _) => Token::Dot,
            ('{', Some('{')) => Token::Open,
            ('}', Some('}')) => Token::Close,
            ('&', Some('&')) => Token::And,
            ('|', Some('|')) => Token::Or,
            ('=', Some('=')) => Token::Equal,
            ('!', Some('=')) => Token::NotEqual,
            ('"' | '\'', _) => {
                let mut text = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return fail(start, "a string is not closed".into()),
                        Some('\\') => {
                            let Some(&escaped) = chars.get(i + 1) else {
                                return fail(start, "a string is not closed".into());
                            };
                            text.push(match escaped {
                                'n' => '\n',
                                't' => '\t',
                                other => other,
                            });
                            i += 2;
                        }
                        Some(&q) if q == c => break,
                        Some(&other) => {
                            text.push(other);
                            i += 1;
                        }
                    }
                }
                i += 1;
                tokens.push((start, Token::Str(text)));
                continue;
            }
            // Digits right after a dot are an array index in a path.
            (c, _) if c.is_ascii_digit() && matches!(tokens.last(), Some((_, Token::Dot))) => {
                while chars.get(i).is_some_and(char::is_ascii_digit) {
                    i += 1;
                }
                tokens.push((start, Token::Word(chars[start..i].iter().collect())));
                continue;
            }
            (c, _)
                if c.is_ascii_digit() || (c == '-' && next.is_some_and(|n| n.is_ascii_digit())) =>
            {
                i += 1;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-'))
                {
                    i += 1;
                }
                let text: String = chars[start..i].iter().collect();
                match serde_json::from_str::<serde_json::Number>(&text) {
                    Ok(number) => tokens.push((start, Token::Number(Value::Number(number)))),
                    Err(_) => return fail(start, format!("{text:?} is not a number")),
                }
                continue;
            }
            (c, _) if c.is_ascii_alphabetic() || c == '_' => {
                i += 1;
                while chars.get(i).is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_') {
                    i += 1;
                }
                tokens.push((start, Token::Word(chars[start..i].iter().collect())));
                continue;
            }
            ('=', _) => return fail(start, "use '==' to compare".into()),
            ('&', _) => return fail(start, "use '&&' for and".into()),
            ('|', _) => return fail(start, "use '||' for or".into()),
            (c, _) => {
                let hint = if matches!(c, '<' | '>') { " (only == and != compare)" } else { "" };
                return fail(start, format!("unexpected {c:?}{hint}"));
            }
        };
        // Every two-character token above starts with a character that is also matched alone
        // only when the second differs, so the width follows from the token.
        i += match token {
            Token::Open
            | Token::Close
            | Token::And
            | Token::Or
            | Token::Equal
            | Token::NotEqual => 2,
            _ => 1,
        };
        tokens.push((start, token));
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<(usize, Token)>,
    next: usize,
    end: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.next).map(|(_, t)| t)
    }

    fn at(&self) -> usize {
        self.tokens.get(self.next).map_or(self.end, |(at, _)| *at)
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T, WhenError> {
        Err(WhenError { at: self.at(), message: message.into() })
    }

    fn unexpected<T>(&self, wanted: &str) -> Result<T, WhenError> {
        match self.peek() {
            Some(token) => self.error(format!("expected {wanted}, found {}", token.describe())),
            None => self.error(format!("expected {wanted}, found the end")),
        }
    }

    fn eat(&mut self, token: &Token) -> bool {
        if self.peek() == Some(token) {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &Token, wanted: &str) -> Result<(), WhenError> {
        if self.eat(token) { Ok(()) } else { self.unexpected(wanted) }
    }

    fn or(&mut self) -> Result<Expr, WhenError> {
        let mut left = self.and()?;
        while self.eat(&Token::Or) {
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, WhenError> {
        let mut left = self.comparison()?;
        while self.eat(&Token::And) {
            left = Expr::And(Box::new(left), Box::new(self.comparison()?));
        }
        Ok(left)
    }

    fn comparison(&mut self) -> Result<Expr, WhenError> {
        let left = self.primary()?;
        let negated = match self.peek() {
            Some(Token::Equal) => false,
            Some(Token::NotEqual) => true,
            _ => return Ok(left),
        };
        self.next += 1;
        let right = self.primary()?;
        if matches!(self.peek(), Some(Token::Equal | Token::NotEqual)) {
            return self.error("comparisons do not chain: add parentheses");
        }
        Ok(Expr::Equal { left: Box::new(left), right: Box::new(right), negated })
    }

    fn primary(&mut self) -> Result<Expr, WhenError> {
        let Some(token) = self.peek().cloned() else { return self.unexpected("a value") };
        match token {
            Token::LParen => {
                self.next += 1;
                let inner = self.or()?;
                self.expect(&Token::RParen, "')'")?;
                Ok(inner)
            }
            Token::Open => {
                self.next += 1;
                let path = self.path()?;
                self.expect(&Token::Close, "'}}'")?;
                Ok(Expr::Path(path))
            }
            Token::Str(text) => {
                self.next += 1;
                Ok(Expr::Literal(Value::String(text)))
            }
            Token::Number(number) => {
                self.next += 1;
                Ok(Expr::Literal(number))
            }
            Token::Word(word) => match word.as_str() {
                "true" | "false" | "null" => {
                    self.next += 1;
                    Ok(Expr::Literal(match word.as_str() {
                        "true" => Value::Bool(true),
                        "false" => Value::Bool(false),
                        _ => Value::Null,
                    }))
                }
                "exists"
                    if self.tokens.get(self.next + 1).map(|(_, t)| t) == Some(&Token::LParen) =>
                {
                    self.next += 2;
                    let path = self.path()?;
                    self.expect(&Token::RParen, "')' after the path")?;
                    Ok(Expr::Exists(path))
                }
                _ => Ok(Expr::Path(self.path()?)),
            },
            _ => self.unexpected("a value"),
        }
    }

    fn path(&mut self) -> Result<Vec<String>, WhenError> {
        let mut parts = Vec::new();
        loop {
            match self.peek().cloned() {
                Some(Token::Word(word))
                    if !parts.is_empty() || !word.starts_with(|c: char| c.is_ascii_digit()) =>
                {
                    self.next += 1;
                    parts.push(word);
                }
                _ => return self.unexpected("a path like steps.<id>.output.<field>"),
            }
            if !self.eat(&Token::Dot) {
                return Ok(parts);
            }
        }
    }
}

impl Condition {
    /// Parses `source`.
    pub fn parse(source: &str) -> Result<Condition, WhenError> {
        let tokens = tokenize(source)?;
        let mut parser = Parser { tokens, next: 0, end: source.chars().count() };
        if parser.peek().is_none() {
            return parser.error("the condition is empty");
        }
        let expr = parser.or()?;
        if parser.peek().is_some() {
            return parser.unexpected("'&&', '||' or the end");
        }
        Ok(Condition { source: source.to_owned(), expr })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Every path the condition reads, dotted: what the loader checks against the steps that
    /// run before it.
    pub fn paths(&self) -> Vec<String> {
        fn walk(expr: &Expr, out: &mut Vec<String>) {
            match expr {
                Expr::Or(a, b) | Expr::And(a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                Expr::Equal { left, right, .. } => {
                    walk(left, out);
                    walk(right, out);
                }
                Expr::Path(path) | Expr::Exists(path) => out.push(path.join(".")),
                Expr::Literal(_) => {}
            }
        }
        let mut out = Vec::new();
        walk(&self.expr, &mut out);
        out
    }

    /// Whether the condition holds over `context`.
    pub fn holds(&self, context: &Value) -> bool {
        evaluate(&self.expr, context) == Value::Bool(true)
    }
}

fn lookup<'a>(context: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(context, |value, key| match value {
        Value::Object(map) => map.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

fn evaluate(expr: &Expr, context: &Value) -> Value {
    let truth = |e: &Expr| evaluate(e, context) == Value::Bool(true);
    match expr {
        Expr::Or(a, b) => Value::Bool(truth(a) || truth(b)),
        Expr::And(a, b) => Value::Bool(truth(a) && truth(b)),
        Expr::Equal { left, right, negated } => {
            let same = equal(&evaluate(left, context), &evaluate(right, context));
            Value::Bool(same != *negated)
        }
        Expr::Literal(value) => value.clone(),
        Expr::Path(path) => lookup(context, path).cloned().unwrap_or(Value::Null),
        Expr::Exists(path) => Value::Bool(lookup(context, path).is_some_and(|v| !v.is_null())),
    }
}

/// JSON equality, but `1 == 1.0`: YAML and models write numbers either way.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn context() -> Value {
        json!({
            "input": {"user_id": 7, "name": "Ada", "flag": true, "none": null, "tags": ["a", "b"]},
            "context": {"user": {"tz": "Europe/London"}},
            "steps": {"build": {"status": "ok", "output": {"type": "plan", "price": 12.5,
                                                          "plan": {"steps": []}}}}
        })
    }

    fn holds(source: &str) -> bool {
        Condition::parse(source).unwrap_or_else(|e| panic!("{source}: {e}")).holds(&context())
    }

    #[test]
    fn the_seed_s_examples_parse_and_evaluate() {
        assert!(holds("{{steps.build.output.type}} == \"plan\""));
        assert!(holds("exists(steps.build.output.plan)"));
        assert!(holds("exists(input.user_id) && {{steps.build.output.type}} != \"direct\""));
        assert!(holds("{{steps.build.output.type}} == 'plan'"), "single quotes, as in its YAML");
        assert!(!holds("{{ steps.build.output.type }} == 'direct'"));
    }

    #[test]
    fn comparisons_cover_strings_numbers_booleans_and_null() {
        assert!(holds("input.name == \"Ada\""));
        assert!(holds("input.name != \"ada\""), "strings compare exactly");
        assert!(holds("input.user_id == 7") && holds("input.user_id == 7.0"));
        assert!(holds("steps.build.output.price == 12.5") && holds("input.user_id != -7"));
        assert!(holds("input.flag == true") && holds("input.flag != false"));
        assert!(holds("input.none == null") && holds("input.missing == null"));
        assert!(holds("input.tags.1 == 'b'"), "array elements by index");
        assert!(holds("steps.build.output.plan.steps.0 == null"));
        assert!(holds("\"x\" == \"x\"") && !holds("1 == \"1\""), "no coercion between types");
    }

    #[test]
    fn exists_is_false_for_missing_and_null_values() {
        assert!(!holds("exists(input.none)"));
        assert!(!holds("exists(input.missing)"));
        assert!(!holds("exists(steps.other.output)"));
        assert!(holds("exists(context.user.tz)"));
    }

    #[test]
    fn and_binds_tighter_than_or_and_parentheses_regroup() {
        // true || (false && false) is true; (true || false) && false is false.
        assert!(holds("input.flag == true || input.flag == false && input.name == 'x'"));
        assert!(!holds("(input.flag == true || input.flag == false) && input.name == 'x'"));
        assert!(holds("input.name == 'x' && input.flag == true || input.user_id == 7"));
        assert!(!holds("input.name == 'x' && (input.flag == true || input.user_id == 7)"));
        assert!(holds("((exists(input.name)))"));
        assert!(holds("(input.flag == true) == true"), "a group compares as its boolean");
    }

    #[test]
    fn only_true_holds() {
        assert!(holds("input.flag") && holds("true"));
        assert!(!holds("input.name"), "a string is not true");
        assert!(!holds("input.user_id") && !holds("null") && !holds("input.missing"));
    }

    #[test]
    fn malformed_conditions_fail_with_the_position() {
        for (source, at, says) in [
            ("", 0, "empty"),
            ("input.a = 1", 8, "'=='"),
            ("input.a == ", 11, "expected a value, found the end"),
            ("input.a > 1", 8, "only == and != compare"),
            ("(input.a == 1", 13, "expected ')'"),
            ("input.a == 'x", 11, "not closed"),
            ("input..a", 6, "expected a path"),
            ("input.a == 1 == 2", 13, "do not chain"),
            ("exists(input.a", 14, "')' after the path"),
            ("exists('a')", 7, "expected a path"),
            ("{{input.a} == 1", 9, "unexpected '}'"),
            ("input.a & input.b", 8, "'&&'"),
            ("input.a input.b", 8, "expected '&&', '||' or the end"),
            ("1x == 1", 0, "not a number"),
        ] {
            let error = Condition::parse(source).expect_err(source);
            assert_eq!(error.at, at, "{source}: {error}");
            assert!(error.message.contains(says), "{source}: {error}");
        }
    }

    #[test]
    fn a_condition_lists_the_paths_it_reads() {
        let condition =
            Condition::parse("exists(input.a) && ({{steps.x.output.t}} == 'p' || c.d != 1)")
                .unwrap();
        assert_eq!(condition.paths(), ["input.a", "steps.x.output.t", "c.d"]);
    }
}
