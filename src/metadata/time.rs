//! NumPy time types (`numpy.datetime64`, `numpy.timedelta64`): their units, and their
//! values as ISO 8601 text, both ways.
//!
//! A stored value is an `i64` count of `scale × unit` since 1970-01-01T00:00 (a datetime)
//! or of elapsed time (a timedelta); `i64::MIN` is NaT ("not a time"). Dates are formatted
//! as `np.datetime_as_string` formats them: proleptic Gregorian calendar, astronomical years
//! (`0000` is 1 BC, `-001` 2 BC), at the precision of the unit (`2020-01-01` for days,
//! `2020-01-01T00:00:10` for seconds, 9 fraction digits for nanoseconds). The calendar is
//! computed here rather than with a date crate because NumPy's range (any `i64` of any
//! unit: years far beyond ±262,000) is wider than chrono's or jiff's.
//!
//! Timedeltas are ISO 8601 durations in the unit's own designator: `P3D`, `PT5H`,
//! `PT50S`, `PT0.000000005S` (nanoseconds), `-P2W`; years and months `P1Y`, `P2M`.
//!
//! Durations are parsed up to about ±1.7 × 10^20 seconds (their parts are summed in
//! attoseconds); longer ones are refused as out of range.
//!
//! Parsing is exact: text that the unit cannot hold without losing precision (a time of day
//! for a `D` array, `1.5` seconds for `s`) is refused, where NumPy would truncate.

use std::fmt;
use std::str::FromStr;

/// The value of NaT (not a time) in every time type.
pub const NAT: i64 = i64::MIN;

/// A NumPy time unit (`datetime64[unit]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    /// No unit (`M8`, `m8`): values have no meaning but NaT; printed as integers.
    Generic,
    /// `Y`: years.
    Year,
    /// `M`: months.
    Month,
    /// `W`: weeks.
    Week,
    /// `D`: days.
    Day,
    /// `h`: hours.
    Hour,
    /// `m`: minutes.
    Minute,
    /// `s`: seconds.
    Second,
    /// `ms`: milliseconds.
    Millisecond,
    /// `us`: microseconds.
    Microsecond,
    /// `ns`: nanoseconds.
    Nanosecond,
    /// `ps`: picoseconds.
    Picosecond,
    /// `fs`: femtoseconds.
    Femtosecond,
    /// `as`: attoseconds.
    Attosecond,
}

const UNITS: [TimeUnit; 14] = [
    TimeUnit::Generic,
    TimeUnit::Year,
    TimeUnit::Month,
    TimeUnit::Week,
    TimeUnit::Day,
    TimeUnit::Hour,
    TimeUnit::Minute,
    TimeUnit::Second,
    TimeUnit::Millisecond,
    TimeUnit::Microsecond,
    TimeUnit::Nanosecond,
    TimeUnit::Picosecond,
    TimeUnit::Femtosecond,
    TimeUnit::Attosecond,
];

/// Attoseconds in one second.
const AS_PER_SECOND: i128 = 1_000_000_000_000_000_000;
/// Attoseconds in one day.
const AS_PER_DAY: i128 = 86_400 * AS_PER_SECOND;

impl TimeUnit {
    /// NumPy's code (`"s"`, `"ns"`, `"D"`; `""` for [`Generic`](Self::Generic)), also the
    /// `unit` of zarr-python's `numpy.datetime64` configuration (which writes `"generic"`).
    pub const fn code(self) -> &'static str {
        match self {
            TimeUnit::Generic => "",
            TimeUnit::Year => "Y",
            TimeUnit::Month => "M",
            TimeUnit::Week => "W",
            TimeUnit::Day => "D",
            TimeUnit::Hour => "h",
            TimeUnit::Minute => "m",
            TimeUnit::Second => "s",
            TimeUnit::Millisecond => "ms",
            TimeUnit::Microsecond => "us",
            TimeUnit::Nanosecond => "ns",
            TimeUnit::Picosecond => "ps",
            TimeUnit::Femtosecond => "fs",
            TimeUnit::Attosecond => "as",
        }
    }

    /// The `unit` field of the Zarr v3 `numpy.datetime64` / `numpy.timedelta64`
    /// configuration (`"generic"` for no unit).
    pub const fn config_name(self) -> &'static str {
        match self {
            TimeUnit::Generic => "generic",
            u => u.code(),
        }
    }

    /// The unit of a NumPy code or a configuration name (`"generic"`, `""`, `"μs"` too).
    pub fn from_code(code: &str) -> Option<TimeUnit> {
        match code {
            "generic" | "" => Some(TimeUnit::Generic),
            "μs" => Some(TimeUnit::Microsecond),
            c => UNITS.iter().copied().find(|u| u.code() == c),
        }
    }

    /// Attoseconds per unit, for the units of fixed length (weeks and finer).
    const fn attoseconds(self) -> Option<i128> {
        let s = AS_PER_SECOND;
        Some(match self {
            TimeUnit::Generic | TimeUnit::Year | TimeUnit::Month => return None,
            TimeUnit::Week => 7 * AS_PER_DAY,
            TimeUnit::Day => AS_PER_DAY,
            TimeUnit::Hour => 3600 * s,
            TimeUnit::Minute => 60 * s,
            TimeUnit::Second => s,
            TimeUnit::Millisecond => s / 1_000,
            TimeUnit::Microsecond => s / 1_000_000,
            TimeUnit::Nanosecond => s / 1_000_000_000,
            TimeUnit::Picosecond => s / 1_000_000_000_000,
            TimeUnit::Femtosecond => s / 1_000_000_000_000_000,
            TimeUnit::Attosecond => 1,
        })
    }

    /// Digits after the seconds' point in this unit's precision.
    const fn fraction_digits(self) -> usize {
        match self {
            TimeUnit::Millisecond => 3,
            TimeUnit::Microsecond => 6,
            TimeUnit::Nanosecond => 9,
            TimeUnit::Picosecond => 12,
            TimeUnit::Femtosecond => 15,
            TimeUnit::Attosecond => 18,
            _ => 0,
        }
    }
}

/// A unit with its scale factor (`10s`: ten seconds per count), as NumPy writes them inside
/// brackets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimeScale {
    /// The unit.
    pub unit: TimeUnit,
    /// Units per count (at least 1; `M8[10s]` has 10).
    pub scale: u32,
}

impl fmt::Display for TimeScale {
    /// `10s`, `ns` (a scale of 1 is not written), empty for generic.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.scale != 1 {
            write!(f, "{}", self.scale)?;
        }
        f.write_str(self.unit.code())
    }
}

impl FromStr for TimeScale {
    type Err = ();

    /// Parses `10s`, `ns`, `25h` (a scale below 1 or beyond `u32` is refused).
    fn from_str(s: &str) -> Result<Self, ()> {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        let unit = TimeUnit::from_code(&s[digits..]).ok_or(())?;
        let scale = match digits {
            0 => 1,
            _ => s[..digits].parse::<u32>().map_err(|_| ())?,
        };
        if scale == 0 || (unit == TimeUnit::Generic && digits > 0) {
            return Err(());
        }
        Ok(TimeScale { unit, scale })
    }
}

fn floor_div(a: i128, b: i128) -> (i128, i128) {
    (a.div_euclid(b), a.rem_euclid(b))
}

/// The civil date (year, month 1–12, day 1–31) of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`, exact for every `i128` that fits).
fn civil_from_days(days: i128) -> (i128, u32, u32) {
    let z = days + 719_468;
    let (era, doe) = floor_div(z, 146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i128::from(month <= 2);
    (year, month, day)
}

/// The day count since 1970-01-01 of a civil date (`days_from_civil`); `None` on overflow.
fn days_from_civil(year: i128, month: u32, day: u32) -> Option<i128> {
    let y = year.checked_sub(i128::from(month <= 2))?;
    let (era, yoe) = floor_div(y, 400);
    let m = i128::from(month);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i128::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era.checked_mul(146_097)?.checked_add(doe - 719_468)
}

fn days_in_month(year: i128, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year.rem_euclid(4) == 0
            && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0) =>
        {
            29
        }
        2 => 28,
        _ => 31,
    }
}

/// `np.datetime_as_string` of a datetime value (`"NaT"` for [`NAT`]; generic values as
/// their integer).
///
/// ```
/// use zarrflow::metadata::{format_datetime, TimeScale, TimeUnit};
/// let s = |unit, scale| TimeScale { unit, scale };
/// assert_eq!(format_datetime(18_262, s(TimeUnit::Day, 1)), "2020-01-01");
/// assert_eq!(format_datetime(-1, s(TimeUnit::Nanosecond, 1)), "1969-12-31T23:59:59.999999999");
/// assert_eq!(format_datetime(3, s(TimeUnit::Second, 10)), "1970-01-01T00:00:30");
/// assert_eq!(format_datetime(i64::MIN, s(TimeUnit::Second, 1)), "NaT");
/// ```
pub fn format_datetime(value: i64, scale: TimeScale) -> String {
    if value == NAT {
        return "NaT".into();
    }
    let v = i128::from(value) * i128::from(scale.scale);
    let year = |y: i128| format!("{y:04}");
    match scale.unit {
        TimeUnit::Generic => value.to_string(),
        TimeUnit::Year => year(1970 + v),
        TimeUnit::Month => {
            let (y, m) = floor_div(v, 12);
            format!("{}-{:02}", year(1970 + y), m + 1)
        }
        unit => {
            let per_day = AS_PER_DAY / unit.attoseconds().unwrap_or(AS_PER_DAY);
            let (days, rem) = if unit == TimeUnit::Week {
                (v * 7, 0)
            } else {
                floor_div(v, per_day)
            };
            let (y, m, d) = civil_from_days(days);
            let mut out = format!("{}-{m:02}-{d:02}", year(y));
            if matches!(unit, TimeUnit::Week | TimeUnit::Day) {
                return out;
            }
            // the time of day in the unit, then in attoseconds (below 86,400 × 10^18)
            let at = rem * unit.attoseconds().unwrap_or(1);
            let (h, at) = floor_div(at, 3600 * AS_PER_SECOND);
            let (min, at) = floor_div(at, 60 * AS_PER_SECOND);
            let (sec, frac) = floor_div(at, AS_PER_SECOND);
            out.push_str(&format!("T{h:02}"));
            if unit == TimeUnit::Hour {
                return out;
            }
            out.push_str(&format!(":{min:02}"));
            if unit == TimeUnit::Minute {
                return out;
            }
            out.push_str(&format!(":{sec:02}"));
            let digits = unit.fraction_digits();
            if digits > 0 {
                let frac = format!("{frac:018}");
                out.push('.');
                out.push_str(&frac[..digits]);
            }
            out
        }
    }
}

/// A timedelta value as an ISO 8601 duration in its unit (`"PT50S"`, `"-P3D"`,
/// `"PT0.000000005S"`; `"NaT"` for [`NAT`]; generic values as their integer).
///
/// ```
/// use zarrflow::metadata::{format_timedelta, TimeScale, TimeUnit};
/// let s = |unit, scale| TimeScale { unit, scale };
/// assert_eq!(format_timedelta(5, s(TimeUnit::Second, 10)), "PT50S");
/// assert_eq!(format_timedelta(-3, s(TimeUnit::Day, 1)), "-P3D");
/// assert_eq!(format_timedelta(1_500, s(TimeUnit::Millisecond, 1)), "PT1.500S");
/// ```
pub fn format_timedelta(value: i64, scale: TimeScale) -> String {
    if value == NAT {
        return "NaT".into();
    }
    let v = i128::from(value) * i128::from(scale.scale);
    let sign = if v < 0 { "-" } else { "" };
    let n = v.unsigned_abs();
    match scale.unit {
        TimeUnit::Generic => value.to_string(),
        TimeUnit::Year => format!("{sign}P{n}Y"),
        TimeUnit::Month => format!("{sign}P{n}M"),
        TimeUnit::Week => format!("{sign}P{n}W"),
        TimeUnit::Day => format!("{sign}P{n}D"),
        TimeUnit::Hour => format!("{sign}PT{n}H"),
        TimeUnit::Minute => format!("{sign}PT{n}M"),
        TimeUnit::Second => format!("{sign}PT{n}S"),
        unit => {
            let digits = unit.fraction_digits() as u32;
            let per = 10u128.pow(digits);
            let frac = format!("{:0width$}", n % per, width = digits as usize);
            format!("{sign}PT{}.{frac}S", n / per)
        }
    }
}

/// Why a time value was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimeValueError {
    /// Not a date, a duration, an integer or `NaT`.
    #[error("expected {expected}")]
    Malformed {
        /// What was expected.
        expected: &'static str,
    },
    /// A valid value that the unit cannot hold exactly.
    #[error("{0} cannot hold it exactly (a finer part would be lost)")]
    Inexact(String),
    /// Beyond the range of the type (or the value of NaT).
    #[error("out of range of a 64-bit count of {0}")]
    OutOfRange(String),
}

const DATE_FORM: &str = "an ISO 8601 date or date-time (2020-01-31, 2020-01-31T12:00:00.5), \
                         NaT, or an integer count of the unit";
const DURATION_FORM: &str = "an ISO 8601 duration (P3D, PT1.5S, -PT5M), NaT, or an integer \
                             count of the unit";

/// A number of digits (`None` unless 1..=40 ASCII digits).
fn digits_value(s: &str) -> Option<i128> {
    (!s.is_empty() && s.len() <= 40 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse::<i128>().ok())
        .flatten()
}

/// An integer count (`-12`, `+3`, `7`).
fn integer(text: &str) -> Option<i128> {
    let (neg, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    digits_value(rest).map(|v| if neg { -v } else { v })
}

/// A seconds field with an optional fraction (`05`, `05.25`) in attoseconds.
fn seconds_attoseconds(s: &str) -> Option<i128> {
    let (whole, frac) = s.split_once(['.', ',']).unwrap_or((s, ""));
    let whole = digits_value(whole)?;
    if s.contains(['.', ',']) && frac.is_empty() {
        return None;
    }
    let mut frac_as: i128 = 0;
    for (i, b) in frac.bytes().enumerate() {
        if !b.is_ascii_digit() {
            return None;
        }
        let d = i128::from(b - b'0');
        if i < 18 {
            frac_as += d * 10i128.pow(17 - i as u32);
        } else if d != 0 {
            return None; // finer than an attosecond
        }
    }
    whole.checked_mul(AS_PER_SECOND)?.checked_add(frac_as)
}

/// A count in `scale` of `total` (a quantity of `unit_as` attoseconds per step), exact.
fn to_count(total: i128, scale: TimeScale) -> Result<i64, TimeValueError> {
    let per = scale.unit.attoseconds().ok_or(TimeValueError::Malformed {
        expected: "a unit of fixed length",
    })?;
    scaled(exact_div(total, per, scale)?, scale)
}

/// `a / b`, when exact (else the unit cannot hold the value).
fn exact_div(a: i128, b: i128, scale: TimeScale) -> Result<i128, TimeValueError> {
    if a % b != 0 {
        return Err(TimeValueError::Inexact(unit_text(scale)));
    }
    Ok(a / b)
}

/// A count of `scale.unit` as a count of `scale` (exact, within `i64`, not NaT).
fn scaled(units: i128, scale: TimeScale) -> Result<i64, TimeValueError> {
    fit(exact_div(units, i128::from(scale.scale), scale)?, scale)
}

fn unit_text(scale: TimeScale) -> String {
    format!("a unit of {scale}")
}

fn fit(count: i128, scale: TimeScale) -> Result<i64, TimeValueError> {
    i64::try_from(count)
        .ok()
        .filter(|&v| v != NAT)
        .ok_or_else(|| TimeValueError::OutOfRange(scale.to_string()))
}

/// Parses a datetime value of `scale`: `NaT`, an integer (the stored count; one that reads
/// as a year, `2020` or `-001`, is the year), or an ISO 8601
/// date / date-time (`2020`, `2020-01`, `2020-01-31`, `2020-01-31T12`, `…T12:30`,
/// `…T12:30:05.25`, a space for `T`, a trailing `Z`) that the unit holds exactly.
///
/// ```
/// use zarrflow::metadata::{parse_datetime, TimeScale, TimeUnit};
/// let s = TimeScale { unit: TimeUnit::Second, scale: 1 };
/// assert_eq!(parse_datetime("2020-01-01T00:00:01", s), Ok(1_577_836_801));
/// assert!(parse_datetime("2020-01-01T00:00:01.5", s).is_err()); // not exact
/// assert_eq!(parse_datetime("NaT", s), Ok(i64::MIN));
/// ```
pub fn parse_datetime(text: &str, scale: TimeScale) -> Result<i64, TimeValueError> {
    let text = text.trim();
    if text == "NaT" {
        return Ok(NAT);
    }
    match (integer(text), scale.unit) {
        (Some(n), TimeUnit::Generic) => return fit(n, scale),
        // an integer is a count, unless it reads as a year (`2020`, `-001`)
        (Some(n), _) => {
            return match parse_iso_datetime(text, scale) {
                Err(TimeValueError::Malformed { .. }) => fit(n, scale),
                date => date,
            };
        }
        _ => {}
    }
    parse_iso_datetime(text, scale)
}

/// [`parse_datetime`] of an ISO 8601 date or date-time.
fn parse_iso_datetime(text: &str, scale: TimeScale) -> Result<i64, TimeValueError> {
    let malformed = TimeValueError::Malformed {
        expected: DATE_FORM,
    };
    if scale.unit == TimeUnit::Generic {
        return Err(TimeValueError::Malformed {
            expected: "NaT or an integer (a generic datetime has no unit)",
        });
    }
    let text = text.strip_suffix('Z').unwrap_or(text);
    let (date, time) = match text.split_once(['T', ' ']) {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    // the year: an optional sign and at least 4 digits (`-001` is NumPy's 2 BC)
    let (neg, rest) = match date.as_bytes().first() {
        Some(b'-') => (true, &date[1..]),
        Some(b'+') => (false, &date[1..]),
        _ => (false, date),
    };
    let mut parts = rest.split('-');
    let year_text = parts.next().unwrap_or("");
    if year_text.len() < 3 || (!neg && year_text.len() < 4) {
        return Err(malformed);
    }
    let year = digits_value(year_text).ok_or(malformed.clone())?;
    let year = if neg { -year } else { year };
    let field = |p: Option<&str>, lo: u32, hi: u32| -> Result<Option<u32>, TimeValueError> {
        match p {
            None => Ok(None),
            Some(s) if s.len() == 2 => s
                .parse::<u32>()
                .ok()
                .filter(|v| (lo..=hi).contains(v))
                .map(Some)
                .ok_or(TimeValueError::Malformed {
                    expected: DATE_FORM,
                }),
            Some(_) => Err(TimeValueError::Malformed {
                expected: DATE_FORM,
            }),
        }
    };
    let month = field(parts.next(), 1, 12)?;
    let day = field(parts.next(), 1, 31)?;
    if parts.next().is_some() || (time.is_some() && day.is_none()) {
        return Err(malformed);
    }
    if let (Some(m), Some(d)) = (month, day)
        && d > days_in_month(year, m)
    {
        return Err(malformed);
    }
    // time of day in attoseconds
    let mut tod: i128 = 0;
    if let Some(t) = time {
        let mut hms = t.split(':');
        let h = field(hms.next(), 0, 23)?.ok_or(malformed.clone())?;
        let m = field(hms.next(), 0, 59)?.unwrap_or(0);
        let s = match hms.next() {
            None => 0,
            Some(s) => seconds_attoseconds(s)
                .filter(|&a| a < 60 * AS_PER_SECOND)
                .ok_or(malformed.clone())?,
        };
        if hms.next().is_some() {
            return Err(malformed);
        }
        tod = i128::from(h) * 3600 * AS_PER_SECOND + i128::from(m) * 60 * AS_PER_SECOND + s;
    }
    let month0 = month.unwrap_or(1);
    let day0 = day.unwrap_or(1);
    let range = || TimeValueError::OutOfRange(scale.to_string());
    match scale.unit {
        TimeUnit::Year | TimeUnit::Month => {
            if day0 != 1 || tod != 0 || (scale.unit == TimeUnit::Year && month0 != 1) {
                return Err(TimeValueError::Inexact(unit_text(scale)));
            }
            let years = year.checked_sub(1970).ok_or_else(range)?;
            let count = match scale.unit {
                TimeUnit::Year => years,
                _ => years
                    .checked_mul(12)
                    .and_then(|m| m.checked_add(i128::from(month0) - 1))
                    .ok_or_else(range)?,
            };
            scaled(count, scale)
        }
        _ => {
            let days = days_from_civil(year, month0, day0).ok_or_else(range)?;
            let inexact = || TimeValueError::Inexact(unit_text(scale));
            // a count of the unit: days times units per day, plus the time of day
            let units = if scale.unit == TimeUnit::Week {
                if tod != 0 || days % 7 != 0 {
                    return Err(inexact());
                }
                days / 7
            } else {
                let ua = scale.unit.attoseconds().unwrap_or(AS_PER_DAY);
                if tod % ua != 0 {
                    return Err(inexact());
                }
                days.checked_mul(AS_PER_DAY / ua)
                    .and_then(|u| u.checked_add(tod / ua))
                    .ok_or_else(range)?
            };
            scaled(units, scale)
        }
    }
}

/// Parses a timedelta value of `scale`: `NaT`, an integer (the stored count), or an ISO 8601
/// duration (`P3D`, `PT1.5S`, `P1DT2H`, `-PT5M`, `P2W`; years and months only for `Y` / `M`
/// units) that the unit holds exactly.
///
/// ```
/// use zarrflow::metadata::{parse_timedelta, TimeScale, TimeUnit};
/// let s = TimeScale { unit: TimeUnit::Millisecond, scale: 1 };
/// assert_eq!(parse_timedelta("PT1.5S", s), Ok(1_500));
/// assert_eq!(parse_timedelta("-P1D", s), Ok(-86_400_000));
/// ```
pub fn parse_timedelta(text: &str, scale: TimeScale) -> Result<i64, TimeValueError> {
    let text = text.trim();
    if text == "NaT" {
        return Ok(NAT);
    }
    if let Some(n) = integer(text) {
        return fit(n, scale);
    }
    let malformed = TimeValueError::Malformed {
        expected: DURATION_FORM,
    };
    let (neg, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let rest = rest.strip_prefix('P').ok_or(malformed.clone())?;
    let (date, time) = match rest.split_once('T') {
        Some((d, t)) if !t.is_empty() => (d, Some(t)),
        Some(_) => return Err(malformed),
        None => (rest, None),
    };
    if date.is_empty() && time.is_none() {
        return Err(malformed);
    }
    let too_long = || TimeValueError::OutOfRange("attoseconds (about 1.7 × 10^20 s)".into());
    let mut calendar_months: i128 = 0; // years and months
    let mut exact: i128 = 0; // weeks and finer, in attoseconds
    let mut take =
        |part: &str, designators: &[(char, Option<i128>)]| -> Result<(), TimeValueError> {
            let mut start = 0;
            let mut last = 0;
            for (i, c) in part.char_indices() {
                if c.is_ascii_digit() || c == '.' || c == ',' {
                    continue;
                }
                let pos = designators
                    .iter()
                    .position(|(d, _)| *d == c)
                    .filter(|&p| p >= last)
                    .ok_or(malformed.clone())?;
                last = pos + 1;
                let number = &part[start..i];
                let (_, attos) = designators[pos];
                match attos {
                    // seconds may have a fraction
                    Some(_) if c == 'S' => {
                        let v = seconds_attoseconds(number).ok_or(malformed.clone())?;
                        exact = exact.checked_add(v).ok_or(malformed.clone())?;
                    }
                    Some(a) => {
                        let v = digits_value(number).ok_or(malformed.clone())?;
                        // durations are summed in attoseconds: about ±1.7 × 10^20 seconds
                        let v = v.checked_mul(a).ok_or_else(too_long)?;
                        exact = exact.checked_add(v).ok_or_else(too_long)?;
                    }
                    None => {
                        let v = digits_value(number).ok_or(malformed.clone())?;
                        let v = if c == 'Y' { v.checked_mul(12) } else { Some(v) };
                        calendar_months = v
                            .and_then(|v| calendar_months.checked_add(v))
                            .ok_or(malformed.clone())?;
                    }
                }
                start = i + c.len_utf8();
            }
            if start != part.len() {
                return Err(malformed.clone());
            }
            Ok(())
        };
    take(
        date,
        &[
            ('Y', None),
            ('M', None),
            ('W', Some(7 * AS_PER_DAY)),
            ('D', Some(AS_PER_DAY)),
        ],
    )?;
    if let Some(t) = time {
        take(
            t,
            &[
                ('H', Some(3600 * AS_PER_SECOND)),
                ('M', Some(60 * AS_PER_SECOND)),
                ('S', Some(AS_PER_SECOND)),
            ],
        )?;
    }
    let sign = if neg { -1 } else { 1 };
    match scale.unit {
        TimeUnit::Generic => Err(TimeValueError::Malformed {
            expected: "NaT or an integer (a generic timedelta has no unit)",
        }),
        TimeUnit::Year | TimeUnit::Month => {
            if exact != 0 {
                return Err(TimeValueError::Inexact(unit_text(scale)));
            }
            let per_unit = if scale.unit == TimeUnit::Year { 12 } else { 1 };
            scaled(sign * exact_div(calendar_months, per_unit, scale)?, scale)
        }
        _ => {
            if calendar_months != 0 {
                return Err(TimeValueError::Inexact(format!(
                    "{} (years and months have no fixed length)",
                    unit_text(scale)
                )));
            }
            to_count(sign * exact, scale)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(unit: TimeUnit, scale: u32) -> TimeScale {
        TimeScale { unit, scale }
    }

    fn assert_malformed(got: Result<i64, TimeValueError>, text: &str) {
        assert!(
            matches!(got, Err(TimeValueError::Malformed { .. })),
            "{text:?}: {got:?}"
        );
    }

    #[test]
    fn formats_as_numpy_does() {
        // each case checked against np.datetime_as_string (numpy 2, pinned venv)
        let cases: &[(i64, TimeUnit, &str)] = &[
            (-1971, TimeUnit::Year, "-001"),
            (-1970, TimeUnit::Year, "0000"),
            (-1969, TimeUnit::Year, "0001"),
            (8030, TimeUnit::Year, "10000"),
            (-1, TimeUnit::Month, "1969-12"),
            (1, TimeUnit::Week, "1970-01-08"),
            (-719_529, TimeUnit::Day, "-001-12-31"),
            (-719_528, TimeUnit::Day, "0000-01-01"),
            (1 << 62, TimeUnit::Day, "12626367463885247-04-15"),
            (-1, TimeUnit::Hour, "1969-12-31T23"),
            (-1, TimeUnit::Minute, "1969-12-31T23:59"),
            (-1, TimeUnit::Second, "1969-12-31T23:59:59"),
            (-1, TimeUnit::Millisecond, "1969-12-31T23:59:59.999"),
            (-1, TimeUnit::Nanosecond, "1969-12-31T23:59:59.999999999"),
            (
                -1,
                TimeUnit::Attosecond,
                "1969-12-31T23:59:59.999999999999999999",
            ),
            (
                i64::MAX,
                TimeUnit::Attosecond,
                "1970-01-01T00:00:09.223372036854775807",
            ),
            (-(i64::MAX), TimeUnit::Year, "-9223372036854773837"),
        ];
        for &(v, unit, want) in cases {
            assert_eq!(format_datetime(v, s(unit, 1)), want, "{v} {unit:?}");
        }
        assert_eq!(format_datetime(3, s(TimeUnit::Day, 7)), "1970-01-22");
        assert_eq!(format_datetime(3, s(TimeUnit::Hour, 25)), "1970-01-04T03");
    }

    #[test]
    fn every_formatted_value_parses_back() {
        let units = [
            TimeUnit::Year,
            TimeUnit::Month,
            TimeUnit::Week,
            TimeUnit::Day,
            TimeUnit::Hour,
            TimeUnit::Minute,
            TimeUnit::Second,
            TimeUnit::Millisecond,
            TimeUnit::Microsecond,
            TimeUnit::Nanosecond,
            TimeUnit::Picosecond,
            TimeUnit::Femtosecond,
            TimeUnit::Attosecond,
        ];
        let values = [
            0,
            1,
            -1,
            12_345_678_901,
            -987_654_321,
            i64::MAX,
            i64::MIN + 1,
            1 << 40,
        ];
        for unit in units {
            for scale in [1, 10] {
                let ts = s(unit, scale);
                for v in values {
                    let text = format_datetime(v, ts);
                    assert_eq!(parse_datetime(&text, ts), Ok(v), "{text} {ts}");
                    let text = format_timedelta(v, ts);
                    let attoseconds = unit
                        .attoseconds()
                        .and_then(|a| i128::from(v).checked_mul(a * i128::from(scale)));
                    if matches!(unit, TimeUnit::Year | TimeUnit::Month) || attoseconds.is_some() {
                        assert_eq!(parse_timedelta(&text, ts), Ok(v), "{text} {ts}");
                    } else {
                        // beyond the attosecond sum's range: refused as such, never wrapped
                        let got = parse_timedelta(&text, ts);
                        assert!(matches!(got, Err(TimeValueError::OutOfRange(_))), "{text}");
                    }
                }
            }
        }
    }

    #[test]
    fn parsing_is_exact_and_bounded() {
        let sec = s(TimeUnit::Second, 1);
        let day = s(TimeUnit::Day, 1);
        assert_eq!(parse_datetime("2020-01-01", sec), Ok(1_577_836_800));
        assert_eq!(
            parse_datetime("2020-01-01 00:00:00Z", sec),
            Ok(1_577_836_800)
        );
        assert_eq!(parse_datetime("2020", day), Ok(18_262));
        assert_eq!(parse_datetime("+10000-01-01", day), Ok(2_932_897));
        assert_eq!(parse_datetime("-0001-01-01", day), Ok(-719_893));
        assert_eq!(parse_datetime("5", day), Ok(5));
        assert_eq!(parse_datetime("-12", day), Ok(-12));
        assert_eq!(parse_datetime("1971", s(TimeUnit::Year, 1)), Ok(1));
        for bad in [
            "2020-02-30",
            "2021-02-29",
            "2020-13-01",
            "2020-1-01",
            "20-01-01",
            "2020-01-01T24",
            "2020-01-01T",
            "x",
            "",
            "2020-01-01T00:00:60",
            "NaN",
            "1e5",
            "2020-01-01T00:00:00.",
        ] {
            assert_malformed(parse_datetime(bad, sec), bad);
        }
        assert!(matches!(
            parse_datetime("2020-01-01T00:00:01", day),
            Err(TimeValueError::Inexact(_))
        ));
        assert!(matches!(
            parse_datetime("2020-01-01T00:00:01", s(TimeUnit::Second, 10)),
            Err(TimeValueError::Inexact(_))
        ));
        assert!(matches!(
            parse_datetime("2020-01-01", s(TimeUnit::Nanosecond, 1)),
            Ok(1_577_836_800_000_000_000)
        ));
        assert!(matches!(
            parse_datetime("2300-01-01", s(TimeUnit::Nanosecond, 1)),
            Err(TimeValueError::OutOfRange(_))
        ));
        assert!(matches!(
            parse_datetime(&format!("{}-01-01", "9".repeat(30)), day),
            Err(TimeValueError::OutOfRange(_))
        ));
        // the NaT bit pattern is not an integer value
        assert!(parse_datetime(&i64::MIN.to_string(), day).is_err());
        assert_eq!(parse_timedelta("P1DT2H", s(TimeUnit::Hour, 1)), Ok(26));
        assert_eq!(parse_timedelta("P1Y2M", s(TimeUnit::Month, 1)), Ok(14));
        for bad in ["P", "PT", "P1H", "PT1D", "P1M1Y", "1D", "P1.5D", "PTS"] {
            assert_malformed(parse_timedelta(bad, sec), bad);
        }
        assert!(matches!(
            parse_timedelta("P1M", sec),
            Err(TimeValueError::Inexact(_))
        ));
        assert!(matches!(
            parse_timedelta("PT0.5S", sec),
            Err(TimeValueError::Inexact(_))
        ));
    }

    #[test]
    fn units_and_scales_round_trip() {
        for unit in UNITS {
            assert_eq!(TimeUnit::from_code(unit.code()), Some(unit));
            assert_eq!(TimeUnit::from_code(unit.config_name()), Some(unit));
        }
        assert_eq!("10s".parse(), Ok(s(TimeUnit::Second, 10)));
        assert_eq!("ns".parse(), Ok(s(TimeUnit::Nanosecond, 1)));
        assert_eq!(s(TimeUnit::Second, 10).to_string(), "10s");
        for bad in ["0s", "x", "10", "99999999999s", "s10"] {
            assert!(bad.parse::<TimeScale>().is_err(), "{bad}");
        }
    }
}
