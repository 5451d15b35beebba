//! The inputs whose value is set whole rather than typed key by key (date, time, colour,
//! slider, number…): what the model typed, read the way a person would have meant it, and
//! written in the input's own value format. Pure functions, so every format is tested here.

/// An `<input type=…>` whose value `type` sets through the value rather than key presses,
/// because Chrome's `Input.insertText` cannot fill it (date, time…) or would give the page
/// keystrokes it does not expect (a slider).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    Date,
    Time,
    DateTimeLocal,
    Month,
    Week,
    Color,
    Range,
    Number,
}

/// The `min`, `max` and `step` attributes of the input, as the page agent read them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    pub min: Option<String>,
    pub max: Option<String>,
    pub step: Option<String>,
}

impl ValueKind {
    /// The kind of `<input type=input_type>`, if its value is set whole.
    pub fn of(input_type: &str) -> Option<ValueKind> {
        Some(match input_type {
            "date" => ValueKind::Date,
            "time" => ValueKind::Time,
            "datetime-local" => ValueKind::DateTimeLocal,
            "month" => ValueKind::Month,
            "week" => ValueKind::Week,
            "color" => ValueKind::Color,
            "range" => ValueKind::Range,
            "number" => ValueKind::Number,
            _ => return None,
        })
    }

    /// The field's own value format, for messages: "YYYY-MM-DD (e.g. 2024-03-31)".
    pub fn expected(self) -> &'static str {
        match self {
            ValueKind::Date => "YYYY-MM-DD (e.g. 2024-03-31)",
            ValueKind::Time => "HH:MM or HH:MM:SS on a 24-hour clock (e.g. 14:30)",
            ValueKind::DateTimeLocal => "YYYY-MM-DDTHH:MM (e.g. 2024-03-31T14:30)",
            ValueKind::Month => "YYYY-MM (e.g. 2024-03)",
            ValueKind::Week => "YYYY-Www, an ISO week (e.g. 2024-W13)",
            ValueKind::Color => "#rrggbb (e.g. #1e90ff)",
            ValueKind::Range | ValueKind::Number => "a plain number (e.g. 42 or 2.5)",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            ValueKind::Date => "a date",
            ValueKind::Time => "a time",
            ValueKind::DateTimeLocal => "a date and time",
            ValueKind::Month => "a month",
            ValueKind::Week => "a week",
            ValueKind::Color => "a colour",
            ValueKind::Range | ValueKind::Number => "a number",
        }
    }

    /// `text` in this input's value format, or why it cannot be: a text that is not in the
    /// format, or a number outside the field's limits. An empty text clears the field.
    pub fn value_for(self, text: &str, limits: &Limits) -> Result<String, String> {
        let text = text.trim();
        if text.is_empty() {
            return if self == ValueKind::Range {
                Err("a slider cannot be empty; give a number".into())
            } else {
                Ok(String::new())
            };
        }
        let read = match self {
            ValueKind::Date => read_date(text).map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}")),
            ValueKind::Time => read_time(text),
            ValueKind::DateTimeLocal => read_date_time(text),
            ValueKind::Month => read_month(text).map(|(y, m)| format!("{y:04}-{m:02}")),
            ValueKind::Week => read_week(text).map(|(y, w)| format!("{y:04}-W{w:02}")),
            ValueKind::Color => read_colour(text),
            ValueKind::Range | ValueKind::Number => read_number(text),
        };
        let Some(value) = read else {
            return Err(format!(
                "{text:?} is not {}; write it as {}",
                self.noun(),
                self.expected()
            ));
        };
        if matches!(self, ValueKind::Range | ValueKind::Number) {
            let number: f64 = value.parse().map_err(|_| format!("{text:?} is not a number"))?;
            self.check_number(number, limits)?;
        }
        Ok(value)
    }

    /// A number against the field's `min`, `max` and `step`, with the defaults HTML gives a
    /// slider (0 to 100 in steps of 1) and a number field (steps of 1).
    fn check_number(self, number: f64, limits: &Limits) -> Result<(), String> {
        let attr = |a: &Option<String>| a.as_deref().and_then(|s| s.trim().parse::<f64>().ok());
        let slider = self == ValueKind::Range;
        let min = attr(&limits.min).or(slider.then_some(0.0));
        let max = attr(&limits.max).or(slider.then_some(100.0)).map(|m| m.max(min.unwrap_or(m)));
        if slider
            && let (Some(min), Some(max)) = (min, max)
            && !(min..=max).contains(&number)
        {
            return Err(format!(
                "{} is outside the slider's range, {} to {}",
                num(number),
                num(min),
                num(max)
            ));
        }
        if let Some(min) = min.filter(|min| number < *min) {
            return Err(format!("{} is below the field's minimum, {}", num(number), num(min)));
        }
        if let Some(max) = max.filter(|max| number > *max) {
            return Err(format!("{} is above the field's maximum, {}", num(number), num(max)));
        }
        let step = match limits.step.as_deref().map(str::trim) {
            Some(any) if any.eq_ignore_ascii_case("any") => return Ok(()),
            Some(step) => step.parse::<f64>().ok().filter(|s| *s > 0.0).unwrap_or(1.0),
            None => 1.0,
        };
        let base = min.unwrap_or(0.0);
        let steps = (number - base) / step;
        if (steps - steps.round()).abs() > 1e-7 * steps.abs().max(1.0) {
            let below = base + steps.floor() * step;
            return Err(format!(
                "{} is not on the field's steps of {} from {}; the nearest are {} and {}",
                num(number),
                num(step),
                num(base),
                num(below),
                num(below + step)
            ));
        }
        Ok(())
    }
}

/// A number for a message: no float noise, no trailing zeros.
fn num(n: f64) -> String {
    let fixed = format!("{n:.10}");
    let trimmed = fixed.trim_end_matches('0').trim_end_matches('.');
    if trimmed == "-0" { "0".into() } else { trimmed.into() }
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

const WEEKDAYS: [&str; 7] =
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

/// "dec", "Dec.", "December" → 12.
fn month_named(word: &str) -> Option<u32> {
    let word = text_case::lowercase(word.trim_end_matches('.'));
    if word.len() < 3 {
        return None;
    }
    let found = MONTHS.iter().position(|m| m.starts_with(&word) && (word.len() == 3 || *m == word));
    // "sept" is the one common abbreviation longer than three letters.
    found.or((word == "sept").then_some(8)).map(|i| i as u32 + 1)
}

fn is_weekday(word: &str) -> bool {
    let word = text_case::lowercase(word.trim_end_matches('.'));
    word.len() >= 3 && WEEKDAYS.iter().any(|d| d.starts_with(&word))
}

fn digits(text: &str) -> Option<u32> {
    (!text.is_empty() && text.len() <= 4 && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// A year as written: four digits, or two meaning 1950–2049.
fn year(text: &str) -> Option<i32> {
    let n = digits(text)? as i32;
    match text.len() {
        4 => Some(n),
        2 => Some(if n < 50 { 2000 + n } else { 1900 + n }),
        _ => None,
    }
}

fn is_leap(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in(year: i32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn valid_date(y: i32, m: u32, d: u32) -> Option<(i32, u32, u32)> {
    ((1..=9999).contains(&y) && (1..=12).contains(&m) && d >= 1 && d <= days_in(y, m))
        .then_some((y, m, d))
}

/// A date as people write it: `2016-12-25`, `2016/12/25`, `12/25/2016` (month first unless
/// the first number cannot be a month), `25.12.2016` (day first, as where dots are used),
/// `December 25, 2016`, `25 Dec 2016`, `Sunday, December 25th, 2016`.
fn read_date(text: &str) -> Option<(i32, u32, u32)> {
    for separator in ['-', '/', '.'] {
        let parts: Vec<&str> = text.split(separator).map(str::trim).collect();
        if parts.len() != 3 || !parts.iter().all(|p| digits(p).is_some()) {
            continue;
        }
        if parts[0].len() == 4 {
            return valid_date(year(parts[0])?, digits(parts[1])?, digits(parts[2])?);
        }
        let (a, b, y) = (digits(parts[0])?, digits(parts[1])?, year(parts[2])?);
        let day_first = separator == '.' || a > 12;
        let (m, d) = if day_first { (b, a) } else { (a, b) };
        return valid_date(y, m, d);
    }
    // Words: exactly one month name, one year and one day, in any order (a second of any
    // of them makes it unreadable).
    let (mut y, mut m, mut d) = (None, None, None);
    for word in text.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty()) {
        if let Some(month) = month_named(word) {
            m = m.xor(Some(month)).or(Some(0));
        } else if is_weekday(word) || word.eq_ignore_ascii_case("the") || word == "of" {
            continue;
        } else if word.len() == 4 && digits(word).is_some() {
            y = y.xor(year(word)).or(Some(0));
        } else {
            let day = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
            let suffix = &word[day.len()..];
            if !["", "st", "nd", "rd", "th"].contains(&text_case::lowercase(suffix).as_str()) {
                return None;
            }
            d = d.xor(Some(digits(day)?)).or(Some(0));
        }
    }
    valid_date(y?, m?, d?)
}

/// A time as people write it: `14:30`, `14:30:15`, `14:30:15.250`, `2:30 PM`, `2pm`,
/// `2:30 p.m.`, `noon`, `midnight`; in the field's format HH:MM, with seconds if given.
fn read_time(text: &str) -> Option<String> {
    let lower = text_case::lowercase(text.trim());
    match lower.as_str() {
        "noon" | "midday" => return Some("12:00".into()),
        "midnight" => return Some("00:00".into()),
        _ => {}
    }
    let compact: String = lower.chars().filter(|c| !c.is_whitespace() && *c != '.').collect();
    let (clock, half) = if let Some(clock) = compact.strip_suffix("am") {
        (clock, Some(false))
    } else if let Some(clock) = compact.strip_suffix("pm") {
        (clock, Some(true))
    } else {
        // Seconds may carry a fraction: keep the dot there.
        (lower.as_str(), None)
    };
    let parts: Vec<&str> = clock.split(':').collect();
    if parts.len() > 3 || (half.is_none() && parts.len() < 2) {
        return None;
    }
    let hour = digits(parts[0]).filter(|_| parts[0].len() <= 2)?;
    let two = |p: &str| digits(p).filter(|n| p.len() == 2 && *n < 60);
    let minute = match parts.get(1) {
        Some(p) => two(p)?,
        None => 0,
    };
    let second = match parts.get(2) {
        Some(p) => {
            let (whole, fraction) = p.split_once('.').unwrap_or((p, ""));
            let fraction_ok = fraction.len() <= 3 && fraction.bytes().all(|b| b.is_ascii_digit());
            if !fraction_ok || (p.contains('.') && fraction.is_empty()) {
                return None;
            }
            Some((two(whole)?, fraction))
        }
        None => None,
    };
    let hour = match half {
        Some(pm) if (1..=12).contains(&hour) => hour % 12 + if pm { 12 } else { 0 },
        Some(_) => return None,
        None if hour < 24 => hour,
        None => return None,
    };
    Some(match second {
        Some((s, "")) => format!("{hour:02}:{minute:02}:{s:02}"),
        Some((s, fraction)) => format!("{hour:02}:{minute:02}:{s:02}.{fraction}"),
        None => format!("{hour:02}:{minute:02}"),
    })
}

/// A date and a time, joined by `T`, a space, a comma or "at" (`2016-12-25T14:30`,
/// `12/25/2016 2:30 PM`, `December 25, 2016 at 2:30pm`).
fn read_date_time(text: &str) -> Option<String> {
    let joined = |(y, m, d): (i32, u32, u32), time: String| format!("{y:04}-{m:02}-{d:02}T{time}");
    if let Some((date, time)) = text.split_once(['T', 't'])
        && date.ends_with(|c: char| c.is_ascii_digit())
        && time.starts_with(|c: char| c.is_ascii_digit())
    {
        return Some(joined(read_date(date)?, read_time(time)?));
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    (1..words.len()).find_map(|split| {
        let date = words[..split].join(" ");
        let mut time = &words[split..];
        if time.first().is_some_and(|w| w.eq_ignore_ascii_case("at")) {
            time = &time[1..];
        }
        let date = read_date(date.trim_end_matches(','))?;
        Some(joined(date, read_time(&time.join(" "))?))
    })
}

/// A month: `2016-12`, `2016/12`, `12/2016`, `December 2016`, `Dec 2016`.
fn read_month(text: &str) -> Option<(i32, u32)> {
    let valid =
        |y: i32, m: u32| ((1..=9999).contains(&y) && (1..=12).contains(&m)).then_some((y, m));
    for separator in ['-', '/', '.'] {
        if let Some((a, b)) = text.split_once(separator) {
            let (a, b) = (a.trim(), b.trim());
            return if a.len() == 4 {
                valid(year(a)?, digits(b)?)
            } else {
                valid(year(b)?, digits(a)?)
            };
        }
    }
    let words: Vec<&str> =
        text.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty()).collect();
    match words.as_slice() {
        [a, b] => match (month_named(a), month_named(b)) {
            (Some(m), None) => valid(year(b)?, m),
            (None, Some(m)) => valid(year(a)?, m),
            _ => None,
        },
        _ => None,
    }
}

/// Day of the week of a date, 0 = Monday.
fn weekday(y: i32, m: u32, d: u32) -> u32 {
    // Sakamoto's method, shifted so Monday is 0.
    const T: [i32; 12] = [0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4];
    let y = if m < 3 { y - 1 } else { y };
    let sunday_first = (y + y / 4 - y / 100 + y / 400 + T[m as usize - 1] + d as i32) % 7;
    ((sunday_first + 6) % 7) as u32
}

/// ISO years have 53 weeks when they start on a Thursday, or on a Wednesday in a leap year.
fn weeks_in(year: i32) -> u32 {
    match weekday(year, 1, 1) {
        3 => 53,
        2 if is_leap(year) => 53,
        _ => 52,
    }
}

/// An ISO week: `2016-W05`, `2016-W5`, `2016W05`, `W5 2016`, `week 5, 2016`, `week 5 of 2016`.
fn read_week(text: &str) -> Option<(i32, u32)> {
    let lower = text_case::lowercase(text).replace(['-', ','], " ");
    let (mut y, mut w) = (None, None);
    let mut words = lower.split_whitespace().peekable();
    while let Some(word) = words.next() {
        if word == "of" {
            continue;
        }
        if word == "week" || word == "w" {
            w = Some(digits(words.next()?)?);
        } else if let Some(rest) = word.strip_prefix('w') {
            w = Some(digits(rest)?);
        } else if let Some((year_part, week)) = word.split_once('w') {
            y = Some(year(year_part).filter(|_| year_part.len() == 4)?);
            w = Some(digits(week)?);
        } else if word.len() == 4 {
            y = Some(year(word)?);
        } else {
            return None;
        }
    }
    let (y, w) = (y?, w?);
    ((1..=9999).contains(&y) && w >= 1 && w <= weeks_in(y)).then_some((y, w))
}

/// A colour: `#1e90ff`, `#1E90FF`, `1e90ff`, `#39f`, `rgb(30, 144, 255)` or a common name.
fn read_colour(text: &str) -> Option<String> {
    let lower = text_case::lowercase(text.trim());
    let hex = lower.strip_prefix('#').unwrap_or(&lower);
    if hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        match hex.len() {
            6 => return Some(format!("#{hex}")),
            3 => return Some(hex.chars().fold("#".to_owned(), |s, c| format!("{s}{c}{c}"))),
            _ => {}
        }
    }
    if let Some(inner) = lower.strip_prefix("rgb(").and_then(|r| r.strip_suffix(')')) {
        let channels: Option<Vec<u8>> =
            inner.split(',').map(|c| c.trim().parse::<u8>().ok()).collect();
        if let Some([r, g, b]) = channels.as_deref() {
            return Some(format!("#{r:02x}{g:02x}{b:02x}"));
        }
        return None;
    }
    let named = [
        ("black", "#000000"),
        ("white", "#ffffff"),
        ("red", "#ff0000"),
        ("green", "#008000"),
        ("lime", "#00ff00"),
        ("blue", "#0000ff"),
        ("yellow", "#ffff00"),
        ("orange", "#ffa500"),
        ("purple", "#800080"),
        ("pink", "#ffc0cb"),
        ("brown", "#a52a2a"),
        ("gray", "#808080"),
        ("grey", "#808080"),
        ("silver", "#c0c0c0"),
        ("maroon", "#800000"),
        ("navy", "#000080"),
        ("teal", "#008080"),
        ("olive", "#808000"),
        ("cyan", "#00ffff"),
        ("aqua", "#00ffff"),
        ("magenta", "#ff00ff"),
        ("fuchsia", "#ff00ff"),
    ];
    named.iter().find(|(name, _)| *name == lower).map(|(_, hex)| (*hex).to_owned())
}

/// A number in the form a number field holds: `42`, `-2.5`, `1e3`; also `+3`, `1,234.5`
/// (thousands separators) and `2,5` (a decimal comma).
fn read_number(text: &str) -> Option<String> {
    let text = text.trim().strip_prefix('+').unwrap_or(text.trim());
    let plain = match text.split_once(',') {
        None => text.to_owned(),
        Some((whole, rest)) => {
            let groups: Vec<&str> = rest.split(',').collect();
            let last = groups.last().map(|g| g.split('.').next().unwrap_or(g)).unwrap_or("");
            let thousands = !whole.trim_start_matches('-').is_empty()
                && whole.trim_start_matches('-').len() <= 3
                && groups[..groups.len() - 1].iter().all(|g| g.len() == 3)
                && last.len() == 3;
            if thousands {
                text.replace(',', "")
            } else if groups.len() == 1 && !rest.contains('.') {
                format!("{whole}.{rest}")
            } else {
                return None;
            }
        }
    };
    let plain = plain.strip_suffix('.').unwrap_or(&plain).to_owned();
    let allowed = plain.bytes().all(|b| b.is_ascii_digit() || b"-.eE+".contains(&b));
    let finite = plain.parse::<f64>().is_ok_and(f64::is_finite);
    (allowed && finite && plain.bytes().any(|b| b.is_ascii_digit())).then_some(plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(kind: &str, text: &str) -> Result<String, String> {
        ValueKind::of(kind).unwrap().value_for(text, &Limits::default())
    }

    fn limited(kind: &str, text: &str, min: &str, max: &str, step: &str) -> Result<String, String> {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        let limits = Limits { min: some(min), max: some(max), step: some(step) };
        ValueKind::of(kind).unwrap().value_for(text, &limits)
    }

    #[test]
    fn dates_are_read_as_people_write_them() {
        for text in [
            "2016-12-25",
            "2016-12-25 ",
            "2016/12/25",
            "12/25/2016",
            "25/12/2016",
            "25.12.2016",
            "12-25-2016",
            "12/25/16",
            "December 25, 2016",
            "Dec 25 2016",
            "25 December 2016",
            "Sunday, December 25th, 2016",
            "the 25th of December 2016",
        ] {
            assert_eq!(value("date", text).as_deref(), Ok("2016-12-25"), "{text:?}");
        }
        assert_eq!(value("date", "2024-2-29").as_deref(), Ok("2024-02-29"));
        assert_eq!(value("date", "3/4/2021").as_deref(), Ok("2021-03-04"), "month first");
    }

    #[test]
    fn impossible_or_unreadable_dates_name_the_format() {
        for text in
            ["2023-02-29", "13/13/2016", "tomorrow", "December 2016", "2016-12", "32 Dec 2016"]
        {
            let error = value("date", text).unwrap_err();
            assert!(error.contains("is not a date"), "{text:?}: {error}");
        }
        assert!(ValueKind::Date.expected().contains("YYYY-MM-DD"));
    }

    #[test]
    fn times_take_twelve_and_twenty_four_hour_clocks() {
        let cases = [
            ("14:30", "14:30"),
            ("9:05", "09:05"),
            ("14:30:15", "14:30:15"),
            ("14:30:15.250", "14:30:15.250"),
            ("2:30 PM", "14:30"),
            ("2:30pm", "14:30"),
            ("2:30 p.m.", "14:30"),
            ("2 pm", "14:00"),
            ("12:15 AM", "00:15"),
            ("12 pm", "12:00"),
            ("noon", "12:00"),
            ("midnight", "00:00"),
        ];
        for (text, expected) in cases {
            assert_eq!(value("time", text).as_deref(), Ok(expected), "{text:?}");
        }
        for text in ["25:00", "14", "13:00 PM", "2:3", "half past two", "14:60"] {
            assert!(value("time", text).unwrap_err().contains("is not a time"), "{text:?}");
        }
    }

    #[test]
    fn date_times_join_a_date_and_a_time() {
        let cases = [
            ("2016-12-25T14:30", "2016-12-25T14:30"),
            ("2016-12-25 14:30", "2016-12-25T14:30"),
            ("12/25/2016 2:30 PM", "2016-12-25T14:30"),
            ("12/25/2016, 2:30 PM", "2016-12-25T14:30"),
            ("December 25, 2016 at 2:30pm", "2016-12-25T14:30"),
            ("2016-12-25T14:30:05", "2016-12-25T14:30:05"),
        ];
        for (text, expected) in cases {
            assert_eq!(value("datetime-local", text).as_deref(), Ok(expected), "{text:?}");
        }
        assert!(value("datetime-local", "2016-12-25").is_err(), "a time is needed");
    }

    #[test]
    fn months_and_weeks() {
        for text in ["2016-12", "2016/12", "12/2016", "December 2016", "dec 2016", "2016 December"]
        {
            assert_eq!(value("month", text).as_deref(), Ok("2016-12"), "{text:?}");
        }
        assert!(value("month", "2016-13").is_err());
        for text in [
            "2016-W05",
            "2016-W5",
            "2016W05",
            "2016-w05",
            "W5 2016",
            "week 5, 2016",
            "week 5 of 2016",
        ] {
            assert_eq!(value("week", text).as_deref(), Ok("2016-W05"), "{text:?}");
        }
        assert_eq!(
            value("week", "2020-W53").as_deref(),
            Ok("2020-W53"),
            "a leap year from a Wednesday"
        );
        assert!(value("week", "2021-W53").unwrap_err().contains("not a week"));
        assert!(value("week", "2016-05").is_err());
    }

    #[test]
    fn colours_become_lowercase_hex() {
        let cases = [
            ("#1E90FF", "#1e90ff"),
            ("1e90ff", "#1e90ff"),
            ("#39f", "#3399ff"),
            ("rgb(30, 144, 255)", "#1e90ff"),
            ("Red", "#ff0000"),
        ];
        for (text, expected) in cases {
            assert_eq!(value("color", text).as_deref(), Ok(expected), "{text:?}");
        }
        assert!(value("color", "#12345").unwrap_err().contains("not a colour"));
        assert!(value("color", "rgb(300, 0, 0)").is_err());
    }

    #[test]
    fn numbers_are_cleaned_and_held_to_the_fields_limits() {
        let cases =
            [("42", "42"), ("+3", "3"), ("-2.5", "-2.5"), ("1,234", "1234"), ("2,5", "2.5")];
        for (text, expected) in cases {
            assert_eq!(limited("number", text, "", "", "any").as_deref(), Ok(expected), "{text:?}");
        }
        assert!(value("number", "twelve").unwrap_err().contains("is not a number"));
        assert!(value("number", "1e999").is_err(), "infinity is not a value");

        let above = limited("number", "150", "0", "100", "").unwrap_err();
        assert!(above.contains("above the field's maximum, 100"), "{above}");
        let below = limited("number", "-1", "0", "", "").unwrap_err();
        assert!(below.contains("below the field's minimum, 0"), "{below}");
        let step = limited("number", "2.3", "0", "10", "0.5").unwrap_err();
        assert!(step.contains("steps of 0.5") && step.contains("2 and 2.5"), "{step}");
        assert_eq!(
            limited("number", "0.3", "0", "1", "0.1").as_deref(),
            Ok("0.3"),
            "no float noise"
        );
        assert!(limited("number", "2.5", "", "", "").unwrap_err().contains("steps of 1"));
    }

    #[test]
    fn a_slider_says_when_a_value_is_outside_its_range() {
        let outside = limited("range", "150", "", "", "").unwrap_err();
        assert!(outside.contains("outside the slider's range, 0 to 100"), "{outside}");
        let outside = limited("range", "5", "10", "20", "").unwrap_err();
        assert!(outside.contains("10 to 20"), "{outside}");
        assert_eq!(limited("range", "30", "0", "100", "10").as_deref(), Ok("30"));
        assert!(limited("range", "33", "0", "100", "10").unwrap_err().contains("30 and 40"));
        assert!(value("range", "").is_err(), "a slider always has a value");
        assert_eq!(value("date", "").as_deref(), Ok(""), "other fields can be cleared");
    }
}
