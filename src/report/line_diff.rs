//! Which lines two short texts share: the longest common subsequence of
//! their lines, for every diff plugtop shows (the screen's edited rules,
//! `plugtop tune`'s recommendation).

/// One step through two sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineStep {
    /// `a[i]` and `b[j]` are the same line.
    Same(usize, usize),
    /// `a[i]` is taken out.
    Taken(usize),
    /// `b[j]` is put in.
    Put(usize),
}

/// Most lines between the common start and end that are matched line by
/// line; a longer change (a whole other file) is listed whole, so a pasted
/// megabyte costs no quadratic diff.
pub const MATCHED_LINES: usize = 2_000;

/// The steps from `a` to `b` that keep the longest common subsequence,
/// in order: the common start and end first taken as they are, what lies
/// between matched line by line up to [`MATCHED_LINES`], else taken out
/// and put in whole.
pub fn steps<T: PartialEq>(a: &[T], b: &[T]) -> Vec<LineStep> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a_mid, b_mid) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut out: Vec<LineStep> = (0..head).map(|i| LineStep::Same(i, i)).collect();
    if a_mid.len().max(b_mid.len()) > MATCHED_LINES {
        out.extend((0..a_mid.len()).map(|i| LineStep::Taken(head + i)));
        out.extend((0..b_mid.len()).map(|j| LineStep::Put(head + j)));
    } else {
        out.extend(middle(a_mid, b_mid).into_iter().map(|s| match s {
            LineStep::Same(i, j) => LineStep::Same(head + i, head + j),
            LineStep::Taken(i) => LineStep::Taken(head + i),
            LineStep::Put(j) => LineStep::Put(head + j),
        }));
    }
    let (from_a, from_b) = (a.len() - tail, b.len() - tail);
    out.extend((0..tail).map(|k| LineStep::Same(from_a + k, from_b + k)));
    out
}

/// The longest common subsequence's steps of two short sequences.
fn middle<T: PartialEq>(a: &[T], b: &[T]) -> Vec<LineStep> {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: the longest common run of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(n.max(m));
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push(LineStep::Same(i, j));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push(LineStep::Put(j));
            j += 1;
        } else {
            out.push(LineStep::Taken(i));
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_lines_are_kept_and_the_rest_taken_or_put() {
        let a = ["x", "y", "z"];
        let b = ["x", "q", "z", "w"];
        assert_eq!(
            steps(&a, &b),
            vec![
                LineStep::Same(0, 0),
                LineStep::Put(1),
                LineStep::Taken(1),
                LineStep::Same(2, 2),
                LineStep::Put(3)
            ]
        );
        assert!(steps::<&str>(&[], &[]).is_empty());
    }

    #[test]
    fn a_long_text_with_one_line_put_on_top_is_one_step_and_the_rest_kept() {
        let a: Vec<String> = (0..3_000).map(|i| format!("l{i}")).collect();
        let mut b = vec!["top".to_string()];
        b.extend(a.iter().cloned());
        let s = steps(&a, &b);
        assert_eq!(
            s.iter()
                .filter(|s| !matches!(s, LineStep::Same(..)))
                .count(),
            1
        );
        assert_eq!(s.len(), 3_001);
        // A whole other long text: everything out, everything in.
        let c: Vec<String> = (0..3_000).map(|i| format!("m{i}")).collect();
        assert_eq!(steps(&a, &c).len(), 6_000);
    }
}
