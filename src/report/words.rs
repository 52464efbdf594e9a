//! Counts and lists in words, once for every output: "1 CPU" and "3 CPUs",
//! "CPU 0 online" and "CPUs 0-3 online", so no message says "1 CPUs" or
//! reads a one-CPU list as a count ("CPUs 0 online").

use crate::kernel::cpulist::CpuList;
use crate::kernel::recording::export::ranges;

/// `n` with the noun that fits it: `one` for exactly 1, `many` otherwise
/// (a fractional count, as an average of CPUs, takes the plural).
pub fn count(n: f64, one: &str, many: &str) -> String {
    let noun = if n == 1.0 { one } else { many };
    format!("{} {noun}", crate::report::node_text::number(n))
}

/// A number of CPUs: "1 CPU", "4 CPUs".
pub fn cpus(n: f64) -> String {
    count(n, "CPU", "CPUs")
}

/// A number of intervals: "1 interval", "6 intervals".
pub fn intervals(n: f64) -> String {
    count(n, "interval", "intervals")
}

/// Which CPUs are online, as a list that cannot be read as a count:
/// "CPU 0 online", "CPUs 0-3,8 online", "no CPU online".
pub fn online_list(list: &CpuList) -> String {
    match list.ids.len() {
        0 => "no CPU online".to_string(),
        1 => format!("CPU {} online", ranges(list)),
        _ => format!("CPUs {} online", ranges(list)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(ids: &[u32]) -> CpuList {
        CpuList {
            count: ids.len() as i32,
            ids: ids.into(),
        }
    }

    #[test]
    fn one_takes_the_singular_and_everything_else_the_plural() {
        assert_eq!(cpus(1.0), "1 CPU");
        assert_eq!(cpus(0.0), "0 CPUs");
        assert_eq!(cpus(4.0), "4 CPUs");
        assert_eq!(cpus(1.5), "1.5 CPUs");
        assert_eq!(intervals(6.0), "6 intervals");
        assert_eq!(intervals(1.0), "1 interval");
    }

    #[test]
    fn a_list_of_one_cpu_is_not_read_as_a_count() {
        assert_eq!(online_list(&list(&[0])), "CPU 0 online");
        assert_eq!(online_list(&list(&[3])), "CPU 3 online");
        assert_eq!(online_list(&list(&[0, 1, 2, 3, 8])), "CPUs 0-3,8 online");
        assert_eq!(online_list(&list(&[])), "no CPU online");
    }
}
