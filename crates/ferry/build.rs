//! Build script: `ferry` embeds the built web page (apps/demo/dist, see `src/ui.rs`), so cargo
//! must rebuild it when the page is built or rebuilt; and a build without the page says so.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let demo = manifest.join("../../apps/demo");
    let dist = demo.join("dist");
    if dist.join("index.html").is_file() {
        // A directory is scanned whole: new hashed asset names count as changes too.
        println!("cargo::rerun-if-changed={}", dist.display());
    } else {
        // Watching a missing path would rerun on every build; the demo directory exists and
        // changes when `npm run build` creates dist/ in it.
        println!("cargo::rerun-if-changed={}", demo.display());
        println!(
            "cargo::warning=the web page is not built (apps/demo/dist): this `ferry` serves a \
             placeholder at / unless --ui-dir is given. Build it first: `make ui` (or `npm run build`)."
        );
    }
}
