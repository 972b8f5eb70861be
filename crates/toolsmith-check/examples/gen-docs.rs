//! Regenerates `docs/rules/` from the rules' doc comments:
//! `cargo run -p toolsmith-check --example gen-docs`.

use std::path::Path;

fn main() -> std::io::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/rules");
    std::fs::create_dir_all(&dir)?;
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "md") {
            std::fs::remove_file(path)?;
        }
    }
    let pages = toolsmith_check::registry::pages();
    for (name, text) in &pages {
        std::fs::write(dir.join(name), text)?;
    }
    #[expect(
        clippy::print_stderr,
        reason = "a developer tool reports what it wrote"
    )]
    {
        eprintln!("wrote {} pages to docs/rules/", pages.len());
    }
    Ok(())
}
