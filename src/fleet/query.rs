//! The Prometheus HTTP API, read as untrusted input: one blocking client
//! (ureq, plain http) with connect and whole-request timeouts, a bounded
//! body, and decoding that turns every surprise (not JSON, `status` not
//! `success`, a result of the wrong type, NaN, Inf, absurd labels, too
//! many series) into an error or a warning, never a panic or a hang.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

/// The largest answer read: a fleet of a thousand guests answers a few
/// MiB at most, and a server that sends more is cut off here, not read
/// into memory.
pub const MAX_BODY: u64 = 64 * 1024 * 1024;

/// The most series one query keeps (the rest are dropped with a warning):
/// a selector that matches far more than plugtop's guests cannot make the
/// screen slow or the process large.
pub const MAX_SERIES: usize = 20_000;

/// The most points kept of one series of a range query.
pub const MAX_POINTS: usize = 11_000;

/// The longest label value kept, in characters; longer ones are cut.
pub const MAX_LABEL: usize = 256;

/// What can go wrong asking Prometheus; each says what to check.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error(
        "{0}: only http:// URLs are supported (this build has no TLS: put Prometheus behind a local http endpoint or an SSH tunnel)"
    )]
    Scheme(String),
    #[error("{0}: not a URL of the form http://HOST:PORT[/PATH]")]
    BadUrl(String),
    #[error("Prometheus did not answer in time ({0:?})")]
    Timeout(Duration),
    #[error("cannot reach Prometheus: {0}")]
    Transport(String),
    #[error("nothing listens at {0} (connection refused)")]
    NothingListens(String),
    /// Not the API's path: not a Prometheus server (nu53 F8: a plugtop
    /// daemon's own /metrics was the natural mistake).
    #[error(
        "{url} answered 404 to {path}: is it a Prometheus server? (a plugtop daemon's /metrics is scraped by Prometheus; give the Prometheus server's URL)"
    )]
    NotFound { url: String, path: String },
    #[error("{url} answered HTTP {status} to {path}: {body}")]
    Status {
        url: String,
        status: u16,
        path: String,
        body: String,
    },
    #[error("Prometheus's answer is larger than {MAX_BODY} bytes")]
    TooLarge,
    #[error("Prometheus's answer is not the API's JSON: {0}")]
    NotJson(String),
    #[error("Prometheus refused the query ({0}): {1}")]
    Refused(String, String),
    #[error("Prometheus answered a {0} where a {1} was asked for")]
    WrongType(String, &'static str),
}

/// A label set, names to values (cut to [`MAX_LABEL`]; not yet escaped for
/// the terminal: that is done where text is shown).
pub type PromLabels = BTreeMap<String, String>;

/// One series of an instant query.
#[derive(Debug, Clone, PartialEq)]
pub struct PromPoint {
    /// The series' labels.
    pub labels: PromLabels,
    /// `None` for NaN, ±Inf or a value that is not a number.
    pub value: Option<f64>,
}

/// One series of a range query.
#[derive(Debug, Clone, PartialEq)]
pub struct PromSeries {
    /// The series' labels.
    pub labels: PromLabels,
    /// (seconds since the epoch, value); non-finite values dropped.
    pub points: Vec<(f64, f64)>,
}

/// An answer and what Prometheus (or the decoding) warned about: a partial
/// answer is still shown, with its warnings in the header.
#[derive(Debug, Clone, PartialEq)]
pub struct PromAnswer<T> {
    /// What the query returned.
    pub data: T,
    /// Prometheus's warnings and infos, and the decoding's.
    pub warnings: Vec<String>,
}

#[derive(Deserialize)]
struct Envelope {
    status: String,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default, rename = "errorType")]
    error_type: Option<String>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    warnings: Option<Bounded<String, 16>>,
    #[serde(default)]
    infos: Option<Bounded<String, 16>>,
}

#[derive(Deserialize)]
struct Data {
    #[serde(rename = "resultType")]
    result_type: String,
    result: Bounded<Item, MAX_SERIES>,
}

#[derive(Deserialize)]
struct RawSeries {
    #[serde(default)]
    metric: KeptLabels,
    #[serde(default)]
    value: Option<PromSample>,
    #[serde(default)]
    values: Option<Bounded<PromSample, MAX_POINTS>>,
}

/// At most `N` items of a JSON array, the rest read past and counted, not
/// kept. The answer is decoded straight into these (never into a
/// `serde_json::Value` first, which took some 30 bytes of memory for each
/// byte of `[1,"1"],`: 1.6 GiB for an answer under the 64 MiB bound), so
/// millions of tiny items cost what `N` of them do.
struct Bounded<T, const N: usize> {
    kept: Vec<T>,
    total: usize,
}

impl<'de, T: Deserialize<'de>, const N: usize> Deserialize<'de> for Bounded<T, N> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct BoundedItems<T, const N: usize>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const N: usize> serde::de::Visitor<'de> for BoundedItems<T, N> {
            type Value = Bounded<T, N>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut kept = Vec::new();
                while kept.len() < N {
                    match seq.next_element::<T>()? {
                        Some(item) => kept.push(item),
                        None => {
                            let total = kept.len();
                            return Ok(Bounded { kept, total });
                        }
                    }
                }
                let mut total = kept.len();
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    total += 1;
                }
                Ok(Bounded { kept, total })
            }
        }
        d.deserialize_seq(BoundedItems(std::marker::PhantomData))
    }
}

/// A series' labels as they are read: the first 64, each name and value
/// cut to [`MAX_LABEL`] characters; the rest read past, not kept.
#[derive(Default)]
struct KeptLabels(PromLabels);

impl<'de> Deserialize<'de> for KeptLabels {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct LabelMap;
        impl<'de> serde::de::Visitor<'de> for LabelMap {
            type Value = KeptLabels;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of label names to values")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut labels = PromLabels::new();
                while labels.len() < 64 {
                    let Some((k, v)) = map.next_entry::<String, String>()? else {
                        return Ok(KeptLabels(labels));
                    };
                    labels.insert(cut(&k), cut(&v));
                }
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(KeptLabels(labels))
            }
        }
        d.deserialize_map(LabelMap)
    }
}

/// One sample, `[time, "value"]`, its value parsed as it is read (see
/// [`parse_value`]): no string kept per point.
#[derive(Deserialize)]
struct PromSample(f64, PromSampleValue);

struct PromSampleValue(Option<f64>);

impl<'de> Deserialize<'de> for PromSampleValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct SampleText;
        impl serde::de::Visitor<'_> for SampleText {
            type Value = PromSampleValue;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a sample value as a string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<PromSampleValue, E> {
                Ok(PromSampleValue(parse_value(v)))
            }
        }
        d.deserialize_str(SampleText)
    }
}

/// One item of `result`: a series (of a vector or a matrix), or anything
/// else (a scalar's or a string's `[time, "value"]` parts), read past so
/// that the answer is refused for its type rather than as bad JSON.
enum Item {
    Series(RawSeries),
    Other,
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ItemVisitor;
        impl<'de> serde::de::Visitor<'de> for ItemVisitor {
            type Value = Item;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a series")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Item, A::Error> {
                RawSeries::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(Item::Series)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Item, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Item::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Item, E> {
                Ok(Item::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Item, E> {
                Ok(Item::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Item, E> {
                Ok(Item::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Item, E> {
                Ok(Item::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<Item, E> {
                Ok(Item::Other)
            }
            fn visit_unit<E>(self) -> Result<Item, E> {
                Ok(Item::Other)
            }
        }
        d.deserialize_any(ItemVisitor)
    }
}

/// A sample's value as Prometheus writes it (a string: "1", "NaN",
/// "+Inf"); only finite numbers are values.
pub fn parse_value(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

fn cut(text: &str) -> String {
    if text.chars().count() <= MAX_LABEL {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(MAX_LABEL - 1).collect();
        s.push('…');
        s
    }
}

/// The envelope of an API answer: its data and warnings, or why not.
fn envelope(body: &[u8]) -> Result<(Data, Vec<String>), QueryError> {
    let env: Envelope =
        serde_json::from_slice(body).map_err(|e| QueryError::NotJson(cut(&e.to_string())))?;
    let mut warnings: Vec<String> = env
        .warnings
        .map(|w| w.kept)
        .unwrap_or_default()
        .into_iter()
        .chain(env.infos.map(|i| i.kept).unwrap_or_default())
        .take(16)
        .map(|w| cut(&w))
        .collect();
    if env.status != "success" {
        return Err(QueryError::Refused(
            cut(env.error_type.as_deref().unwrap_or(&env.status)),
            cut(env.error.as_deref().unwrap_or("no reason given")),
        ));
    }
    let data = env
        .data
        .ok_or_else(|| QueryError::NotJson("`data` is missing".into()))?;
    warnings.dedup();
    Ok((data, warnings))
}

/// The series of an answer whose result must be of type `kind`, at most
/// [`MAX_SERIES`] (a warning says when more were dropped), and its warnings.
fn series(body: &[u8], kind: &'static str) -> Result<(Vec<RawSeries>, Vec<String>), QueryError> {
    let (data, mut warnings) = envelope(body)?;
    if data.result_type != kind {
        return Err(QueryError::WrongType(cut(&data.result_type), kind));
    }
    let result = data.result;
    let total = result.total;
    let out = result
        .kept
        .into_iter()
        .map(|item| match item {
            Item::Series(s) => Ok(s),
            Item::Other => Err(QueryError::NotJson(
                "`result` is not a list of series".into(),
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    if total > MAX_SERIES {
        warnings.push(format!(
            "{total} series answered, only the first {MAX_SERIES} kept: narrow --match"
        ));
    }
    Ok((out, warnings))
}

/// Decodes an instant query's answer (a vector).
pub fn decode_vector(body: &[u8]) -> Result<PromAnswer<Vec<PromPoint>>, QueryError> {
    let (series, warnings) = series(body, "vector")?;
    let data = series
        .into_iter()
        .map(|s| PromPoint {
            labels: s.metric.0,
            value: s.value.and_then(|PromSample(_, v)| v.0),
        })
        .collect();
    Ok(PromAnswer { data, warnings })
}

/// Decodes a range query's answer (a matrix).
pub fn decode_matrix(body: &[u8]) -> Result<PromAnswer<Vec<PromSeries>>, QueryError> {
    let (series, warnings) = series(body, "matrix")?;
    let data = series
        .into_iter()
        .map(|s| PromSeries {
            labels: s.metric.0,
            points: s
                .values
                .map(|v| v.kept)
                .unwrap_or_default()
                .into_iter()
                .filter(|PromSample(t, _)| t.is_finite())
                .filter_map(|PromSample(t, v)| v.0.map(|v| (t, v)))
                .collect(),
        })
        .collect();
    Ok(PromAnswer { data, warnings })
}

/// Something that answers PromQL: the HTTP client, or canned answers in
/// tests of the layers above.
pub trait Prometheus: Send {
    /// `query` evaluated at `at` (seconds since the epoch).
    fn instant(&self, query: &str, at: f64) -> Result<PromAnswer<Vec<PromPoint>>, QueryError>;
    /// `query` over `start..=end` every `step` seconds.
    fn range(
        &self,
        query: &str,
        start: f64,
        end: f64,
        step: f64,
    ) -> Result<PromAnswer<Vec<PromSeries>>, QueryError>;
}

/// The Prometheus HTTP API over plain http, with timeouts.
pub struct PromClient {
    base: String,
    timeout: Duration,
    agent: ureq::Agent,
}

impl PromClient {
    /// A client of the Prometheus at `url` (`http://host:port[/prefix]`);
    /// `timeout` bounds a whole request, connect to last byte, so a server
    /// that never answers or trickles bytes costs at most that.
    pub fn new(url: &str, timeout: Duration) -> Result<PromClient, QueryError> {
        let url = url.trim();
        let Some(rest) = url.strip_prefix("http://") else {
            return Err(if url.contains("://") {
                QueryError::Scheme(cut(url))
            } else {
                QueryError::BadUrl(cut(url))
            });
        };
        let host = rest.split('/').next().unwrap_or_default();
        if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(QueryError::BadUrl(cut(url)));
        }
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .timeout_connect(Some(timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .https_only(false)
            .user_agent(concat!("plugtop/", env!("CARGO_PKG_VERSION")))
            .build();
        Ok(PromClient {
            base: url.trim_end_matches('/').to_string(),
            timeout,
            agent: config.into(),
        })
    }

    /// GETs `path` with `params`; the body, bounded.
    fn get(&self, path: &str, params: &[(&str, String)]) -> Result<Vec<u8>, QueryError> {
        let mut request = self.agent.get(&format!("{}{path}", self.base));
        for (k, v) in params {
            request = request.query(k, v);
        }
        let url = without_credentials(&self.base);
        let mut response = request.call().map_err(|e| match e {
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
                QueryError::NothingListens(url.clone())
            }
            e => self.transport(e),
        })?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_BODY)
            .read_to_vec()
            .map_err(|e| self.transport(e));
        match body {
            // The API answers errors (400, 422, 503) with its JSON envelope.
            Ok(body) if status == 200 || body.first() == Some(&b'{') => Ok(body),
            Ok(_) if status == 404 => Err(QueryError::NotFound {
                url,
                path: path.to_string(),
            }),
            // One line: a body's line breaks would break the message.
            Ok(body) => Err(QueryError::Status {
                url,
                status,
                path: path.to_string(),
                body: cut(&String::from_utf8_lossy(&body[..body.len().min(200)])
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")),
            }),
            Err(e) => Err(e),
        }
    }

    fn transport(&self, e: ureq::Error) -> QueryError {
        match e {
            ureq::Error::Timeout(_) => QueryError::Timeout(self.timeout),
            ureq::Error::BodyExceedsLimit(_) => QueryError::TooLarge,
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                QueryError::Timeout(self.timeout)
            }
            other => QueryError::Transport(cut(&other.to_string())),
        }
    }
}

/// `url` as plugtop shows it: a `user:password@` in it is not put on a
/// screen that someone may be looking over, nor in a message.
pub fn without_credentials(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let host_end = rest.find('/').unwrap_or(rest.len());
    match rest[..host_end].rfind('@') {
        Some(at) if scheme.is_empty() => rest[at + 1..].to_string(),
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// A time as the API takes it.
fn stamp(t: f64) -> String {
    format!("{t:.3}")
}

impl Prometheus for PromClient {
    fn instant(&self, query: &str, at: f64) -> Result<PromAnswer<Vec<PromPoint>>, QueryError> {
        let body = self.get(
            "/api/v1/query",
            &[
                ("query", query.to_string()),
                ("time", stamp(at)),
                ("timeout", format!("{}s", self.timeout.as_secs().max(1))),
            ],
        )?;
        decode_vector(&body)
    }

    fn range(
        &self,
        query: &str,
        start: f64,
        end: f64,
        step: f64,
    ) -> Result<PromAnswer<Vec<PromSeries>>, QueryError> {
        let body = self.get(
            "/api/v1/query_range",
            &[
                ("query", query.to_string()),
                ("start", stamp(start)),
                ("end", stamp(end)),
                ("step", format!("{:.3}", step.max(0.001))),
                ("timeout", format!("{}s", self.timeout.as_secs().max(1))),
            ],
        )?;
        decode_matrix(&body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_that_are_not_finite_numbers_are_none() {
        assert_eq!(parse_value("1.5"), Some(1.5));
        assert_eq!(parse_value("NaN"), None);
        assert_eq!(parse_value("+Inf"), None);
        assert_eq!(parse_value("-Inf"), None);
        assert_eq!(parse_value("1e400"), None);
        assert_eq!(parse_value("x"), None);
    }

    #[test]
    fn an_error_envelope_is_a_refusal() {
        let e =
            decode_vector(br#"{"status":"error","errorType":"bad_data","error":"parse error"}"#);
        assert!(matches!(e, Err(QueryError::Refused(t, _)) if t == "bad_data"));
    }

    #[test]
    fn a_matrix_where_a_vector_was_asked_is_refused() {
        let e =
            decode_vector(br#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#);
        assert!(matches!(e, Err(QueryError::WrongType(..))));
    }

    #[test]
    fn a_scalar_where_a_vector_was_asked_is_refused_for_its_type() {
        let e = decode_vector(
            br#"{"status":"success","data":{"resultType":"scalar","result":[1,"2"]}}"#,
        );
        assert!(matches!(e, Err(QueryError::WrongType(..))), "{e:?}");
        let e = decode_vector(
            br#"{"status":"success","data":{"resultType":"vector","result":[1,"2"]}}"#,
        );
        assert!(matches!(e, Err(QueryError::NotJson(..))), "{e:?}");
    }

    #[test]
    fn labels_warnings_and_points_are_kept_bounded_as_they_are_read() {
        let labels: String = (0..1000).map(|i| format!(r#""l{i:04}":"v","#)).collect();
        let warnings = vec![r#""w""#; 1000].join(",");
        let points = vec![r#"[1,"1"]"#; MAX_POINTS + 5].join(",");
        let body = format!(
            r#"{{"status":"success","warnings":[{warnings}],"data":{{"resultType":"matrix","result":[{{"metric":{{{labels}"instance":"a"}},"values":[{points}]}}]}}}}"#
        );
        let a = decode_matrix(body.as_bytes()).expect("decoded");
        assert_eq!(a.data[0].labels.len(), 64);
        assert_eq!(a.data[0].points.len(), MAX_POINTS);
        assert_eq!(a.warnings, ["w"]);
    }

    #[test]
    fn warnings_come_through() {
        let a = decode_vector(
            br#"{"status":"success","warnings":["partial"],"data":{"resultType":"vector","result":[{"metric":{"instance":"a"},"value":[1,"2"]}]}}"#,
        )
        .expect("decoded");
        assert_eq!(a.warnings, ["partial"]);
        assert_eq!(a.data[0].value, Some(2.0));
    }

    #[test]
    fn urls_other_than_http_are_refused() {
        let t = Duration::from_secs(1);
        assert!(matches!(
            PromClient::new("https://x:9090", t),
            Err(QueryError::Scheme(_))
        ));
        assert!(matches!(
            PromClient::new("x:9090", t),
            Err(QueryError::BadUrl(_))
        ));
        assert!(PromClient::new("http://127.0.0.1:9090/prom/", t).is_ok());
    }
}
