//! The fault switches `ferry-fakes` takes on stdin while it runs, one a line:
//! `too-many <provider> <count> <seconds>` (the next `count` API calls answer 429 with
//! `Retry-After: <seconds>`) and `unavailable <provider> <count> <seconds>` (the next `count`
//! downloads answer 503 with it), so a browser spec can flip a running fake.

use std::sync::atomic::Ordering;

use super::Faults;

/// Applies one `too-many|unavailable <provider> <count> <seconds>` line.
pub fn switch(faults: &[(&str, &Faults)], line: &str) -> Result<(), String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let [command, provider, count, seconds] = words[..] else {
        return Err(format!(
            "expected `too-many|unavailable <provider> <count> <seconds>`, got {line:?}"
        ));
    };
    if command != "too-many" && command != "unavailable" {
        return Err(format!("unknown switch {command:?}"));
    }
    let (_, f) = faults
        .iter()
        .find(|(name, _)| *name == provider)
        .ok_or_else(|| format!("unknown provider {provider:?}"))?;
    let count: u32 = count.parse().map_err(|_| format!("bad count {count:?}"))?;
    let seconds: u64 = seconds
        .parse()
        .map_err(|_| format!("bad seconds {seconds:?}"))?;
    f.retry_after.store(seconds, Ordering::SeqCst);
    let counter = if command == "too-many" {
        &f.too_many
    } else {
        &f.unavailable
    };
    counter.store(count, Ordering::SeqCst);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each switch sets its own counter and the wait; a bad line is refused, nothing set.
    #[test]
    fn switches_set_the_429_or_the_503_counter() {
        let f = Faults::default();
        let faults = [("dropbox", &f)];
        assert_eq!(switch(&faults, "unavailable dropbox 2 7"), Ok(()));
        assert_eq!(
            (
                f.unavailable.load(Ordering::SeqCst),
                f.too_many.load(Ordering::SeqCst),
                f.retry_after.load(Ordering::SeqCst)
            ),
            (2, 0, 7)
        );
        assert_eq!(switch(&faults, "too-many dropbox 1 3"), Ok(()));
        assert_eq!(f.too_many.load(Ordering::SeqCst), 1);
        assert_eq!(
            switch(&faults, "slow dropbox 1 3"),
            Err("unknown switch \"slow\"".into())
        );
        assert_eq!(
            switch(&faults, "unavailable box 1 3"),
            Err("unknown provider \"box\"".into())
        );
        assert_eq!(f.unavailable.load(Ordering::SeqCst), 2);
    }
}
