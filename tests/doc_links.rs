//! Every relative link in README.md and docs/*.md reaches a file that exists, and every
//! `#anchor` names a heading of its target, slugged as GitHub slugs headings. A page moved
//! or a heading renamed fails here, naming the page and the link.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every page under docs/, as paths relative to the repository.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    let docs = root().join("docs");
    for entry in std::fs::read_dir(&docs).expect("docs/ exists") {
        let path = entry.expect("docs/ is readable").path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(
                path.strip_prefix(root())
                    .expect("under the root")
                    .to_path_buf(),
            );
        }
    }
    pages.sort();
    pages
}

/// GitHub's heading anchor: lowercased, every character but letters, digits, `_`, `-` and
/// spaces dropped, spaces turned into `-`.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

struct Page {
    anchors: BTreeSet<String>,
    /// (destination, line) of every link and image.
    links: Vec<(String, usize)>,
}

fn parse(text: &str) -> Page {
    let mut anchors = BTreeSet::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut links = Vec::new();
    let mut heading: Option<String> = None;
    for (event, range) in Parser::new_ext(text, Options::all()).into_offset_iter() {
        let line = text[..range.start].matches('\n').count() + 1;
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(&heading.take().unwrap_or_default());
                // A repeated heading gets -1, -2… as on GitHub.
                let n = seen.entry(base.clone()).or_insert(0);
                let anchor = if *n == 0 {
                    base.clone()
                } else {
                    format!("{base}-{n}")
                };
                *n += 1;
                anchors.insert(anchor);
            }
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                links.push((dest_url.to_string(), line));
            }
            _ => {}
        }
    }
    Page { anchors, links }
}

fn is_external(dest: &str) -> bool {
    dest.contains("://") || dest.starts_with("mailto:")
}

/// Every broken link of `pages` ("page:line: link: why"), and how many relative links were
/// checked; `exists` says whether a path (relative to the repository) is there.
fn broken_links(
    pages: &BTreeMap<PathBuf, Page>,
    exists: impl Fn(&Path) -> bool,
) -> (Vec<String>, usize) {
    let mut broken = Vec::new();
    let mut checked = 0;
    for (path, page) in pages {
        let dir = path.parent().unwrap_or(Path::new(""));
        for (dest, line) in &page.links {
            if is_external(dest) {
                continue;
            }
            checked += 1;
            let (file, anchor) = dest.split_once('#').unwrap_or((dest, ""));
            let target = if file.is_empty() {
                path.clone()
            } else {
                normalize(&dir.join(file))
            };
            if !exists(&target) {
                broken.push(format!(
                    "{}:{line}: {dest}: no file {}",
                    path.display(),
                    target.display()
                ));
                continue;
            }
            if anchor.is_empty() {
                continue;
            }
            match pages.get(&target) {
                Some(t) if t.anchors.contains(anchor) => {}
                Some(t) => broken.push(format!(
                    "{}:{line}: {dest}: {} has no heading #{anchor} (it has: {})",
                    path.display(),
                    target.display(),
                    t.anchors.iter().cloned().collect::<Vec<_>>().join(", ")
                )),
                None => broken.push(format!(
                    "{}:{line}: {dest}: an anchor into {}, which is not a checked page",
                    path.display(),
                    target.display()
                )),
            }
        }
    }
    (broken, checked)
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let pages: BTreeMap<PathBuf, Page> = pages()
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(root().join(&p)).expect("page is readable");
            (p, parse(&text))
        })
        .collect();
    let (broken, checked) = broken_links(&pages, |p| root().join(p).exists());
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(
        checked > 50,
        "only {checked} relative links found: is the parser reading the pages?"
    );
}

/// `docs/../README.md` → `README.md`, without touching the filesystem.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn anchors_are_slugged_as_github_slugs_them() {
    assert_eq!(slug("A fixed clock: --now"), "a-fixed-clock---now");
    assert_eq!(slug("The code↔graph join"), "the-codegraph-join");
    assert_eq!(slug("Agents: strata mcp"), "agents-strata-mcp");
    assert_eq!(slug("Snake_case and Ünïcode"), "snake_case-and-ünïcode");
    let page = parse("# Title\n## Same\n## Same\n```\n# not a heading\n```\n[x](#same-1)\n");
    assert!(page.anchors.contains("same") && page.anchors.contains("same-1"));
    assert!(!page.anchors.contains("not-a-heading"));
    assert_eq!(page.links, vec![("#same-1".to_string(), 7)]);
}

#[test]
fn a_missing_page_or_heading_is_named() {
    let pages: BTreeMap<PathBuf, Page> = [
        (
            PathBuf::from("README.md"),
            parse("# Strata\n[ok](docs/a.md#real) [gone](docs/b.md)\n\n[typo](docs/a.md#imagined) [up](#strata)\n"),
        ),
        (PathBuf::from("docs/a.md"), parse("## Real\n[back](../README.md#strata)\n")),
    ]
    .into_iter()
    .collect();
    let exists = |p: &Path| p == Path::new("README.md") || p == Path::new("docs/a.md");
    let (broken, checked) = broken_links(&pages, exists);
    assert_eq!(checked, 5);
    assert_eq!(
        broken,
        vec![
            "README.md:2: docs/b.md: no file docs/b.md".to_string(),
            "README.md:4: docs/a.md#imagined: docs/a.md has no heading #imagined (it has: real)"
                .to_string(),
        ]
    );
}
