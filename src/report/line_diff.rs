//! Which lines two short texts share: the longest common subsequence of
//! their lines, for every diff plugtop shows (the screen's edited rules,
//! `plugtop tune`'s recommendation).

/// One step through two sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `a[i]` and `b[j]` are the same line.
    Same(usize, usize),
    /// `a[i]` is taken out.
    Taken(usize),
    /// `b[j]` is put in.
    Put(usize),
}

/// The steps from `a` to `b` that keep the longest common subsequence,
/// in order. Quadratic in time and memory: callers bound the lengths.
pub fn steps<T: PartialEq>(a: &[T], b: &[T]) -> Vec<Step> {
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
            out.push(Step::Same(i, j));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push(Step::Put(j));
            j += 1;
        } else {
            out.push(Step::Taken(i));
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
                Step::Same(0, 0),
                Step::Put(1),
                Step::Taken(1),
                Step::Same(2, 2),
                Step::Put(3)
            ]
        );
        assert!(steps::<&str>(&[], &[]).is_empty());
    }
}
