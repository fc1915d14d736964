//! The grep and find tools on a fixture tree, inside and outside a git repository.

use std::path::Path;
use std::process::Command;

use pi_agent_core::{AgentTool, AgentToolResult, ToolError};
use pi_coding_agent::tools::find::FindTool;
use pi_coding_agent::tools::grep::GrepTool;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn write(root: &Path, rel: &str, content: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// The fixture: a `.gitignore` excluding `ignored/` and `*.log`, a hidden directory, CRLF
/// content, an upper-case file and a binary file.
fn fixture(git: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", b"ignored/\n*.log\n");
    write(root, "a.txt", b"hello world\nsecond line\n");
    write(root, "b.log", b"hello log\n");
    write(root, "ignored/x.txt", b"hello ignored\n");
    write(root, ".hidden/h.txt", b"hello hidden\n");
    write(root, "sub/c.rs", b"fn hello() {}\r\nlet x = 1;\n");
    write(root, "sub/deep/d.txt", b"HELLO upper\n");
    write(root, "sub/UP.TXT", b"nothing here\n");
    write(root, "bin.dat", b"hello\0binary\n");
    if git {
        let status = Command::new("git")
            .args(["init", "-q", "--template="])
            .current_dir(root)
            .status()
            .unwrap();
        assert!(status.success());
    }
    dir
}

async fn call(tool: &dyn AgentTool, args: Value) -> Result<AgentToolResult, ToolError> {
    tool.execute("call", args, CancellationToken::new(), None)
        .await
}

fn text(result: &AgentToolResult) -> &str {
    result.content[0].as_text().unwrap()
}

#[tokio::test]
async fn grep_outside_git_ignores_gitignore_like_rg() {
    let dir = fixture(false);
    let grep = GrepTool::new(dir.path());
    let r = call(&grep, json!({"pattern": "hello"})).await.unwrap();
    assert_eq!(
        text(&r),
        ".hidden/h.txt:1: hello hidden\n\
         a.txt:1: hello world\n\
         b.log:1: hello log\n\
         ignored/x.txt:1: hello ignored\n\
         sub/c.rs:1: fn hello() {}"
    );
    assert!(r.details.is_none());
}

#[tokio::test]
async fn grep_inside_git_honours_gitignore() {
    let dir = fixture(true);
    let grep = GrepTool::new(dir.path());
    let r = call(&grep, json!({"pattern": "hello"})).await.unwrap();
    assert_eq!(
        text(&r),
        ".hidden/h.txt:1: hello hidden\na.txt:1: hello world\nsub/c.rs:1: fn hello() {}"
    );
    // A nested directory is searched with the repository's rules too.
    let r = call(&grep, json!({"pattern": "hello", "path": "sub"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "c.rs:1: fn hello() {}");
}

#[tokio::test]
async fn grep_flags() {
    let dir = fixture(true);
    let grep = GrepTool::new(dir.path());
    let r = call(
        &grep,
        json!({"pattern": "hello", "ignoreCase": true, "glob": "*.txt"}),
    )
    .await
    .unwrap();
    assert_eq!(
        text(&r),
        ".hidden/h.txt:1: hello hidden\na.txt:1: hello world\nsub/deep/d.txt:1: HELLO upper"
    );
    let r = call(&grep, json!({"pattern": "hello()", "literal": true}))
        .await
        .unwrap();
    assert_eq!(text(&r), "sub/c.rs:1: fn hello() {}");
    let r = call(&grep, json!({"pattern": "hello", "glob": "!*.txt"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "sub/c.rs:1: fn hello() {}");
    // A glob with `/` is anchored at the tool cwd (rg's working directory), not the search path.
    let r = call(
        &grep,
        json!({"pattern": "hello", "path": "sub", "glob": "sub/*.rs"}),
    )
    .await
    .unwrap();
    assert_eq!(text(&r), "c.rs:1: fn hello() {}");
    let r = call(&grep, json!({"pattern": "^let .* = \\d;$"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "sub/c.rs:2: let x = 1;");
}

#[tokio::test]
async fn grep_explicit_file_uses_its_name_and_is_always_searched() {
    let dir = fixture(true);
    let grep = GrepTool::new(dir.path());
    let r = call(&grep, json!({"pattern": "hello", "path": "ignored/x.txt"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "x.txt:1: hello ignored");
    let r = call(&grep, json!({"pattern": "binary", "path": "bin.dat"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "bin.dat:1: hello\0binary");
}

#[tokio::test]
async fn grep_single_file_reference_test() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "example.txt",
        b"first line\nmatch line\nlast line",
    );
    let grep = GrepTool::new(dir.path());
    let r = call(
        &grep,
        json!({"pattern": "match", "path": dir.path().join("example.txt")}),
    )
    .await
    .unwrap();
    assert_eq!(text(&r), "example.txt:2: match line");
}

#[tokio::test]
async fn grep_limit_and_context_reference_test() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "context.txt",
        b"before\nmatch one\nafter\nmiddle\nmatch two\nafter two",
    );
    let grep = GrepTool::new(dir.path());
    let r = call(
        &grep,
        json!({"pattern": "match", "path": "context.txt", "limit": 1, "context": 1}),
    )
    .await
    .unwrap();
    assert_eq!(
        text(&r),
        "context.txt-1- before\ncontext.txt:2: match one\ncontext.txt-3- after\n\n\
         [1 matches limit reached. Use limit=2 for more, or refine pattern]"
    );
    assert_eq!(r.details, Some(json!({"matchLimitReached": 1})));
}

#[tokio::test]
async fn grep_context_blocks_repeat_and_reach_the_trailing_empty_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", b"a\nm1\nm2\n");
    let grep = GrepTool::new(dir.path());
    let r = call(&grep, json!({"pattern": "^m", "context": 1}))
        .await
        .unwrap();
    assert_eq!(
        text(&r),
        "f.txt-1- a\nf.txt:2: m1\nf.txt-3- m2\nf.txt-2- m1\nf.txt:3: m2\nf.txt-4- "
    );
}

#[tokio::test]
async fn grep_long_lines_and_byte_limit_notices() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("{}needle", "x".repeat(600));
    write(dir.path(), "long.txt", long.as_bytes());
    let grep = GrepTool::new(dir.path());
    let r = call(&grep, json!({"pattern": "needle"})).await.unwrap();
    assert_eq!(
        text(&r),
        format!(
            "long.txt:1: {}... [truncated]\n\n\
             [Some lines truncated to 500 chars. Use read tool to see full lines]",
            "x".repeat(500)
        )
    );
    assert_eq!(r.details, Some(json!({"linesTruncated": true})));

    let body: String = (0..1000)
        .map(|i| format!("hit {i:04} {}\n", "y".repeat(90)))
        .collect();
    write(dir.path(), "many.txt", body.as_bytes());
    let r = call(&grep, json!({"pattern": "hit", "limit": 1000}))
        .await
        .unwrap();
    let t = text(&r);
    assert!(t.ends_with("\n\n[1000 matches limit reached. Use limit=2000 for more, or refine pattern. 50.0KB limit reached]"));
    let details = r.details.clone().unwrap();
    assert_eq!(details["matchLimitReached"], 1000);
    assert_eq!(details["truncation"]["truncatedBy"], "bytes");
    let kept = t.split("\n\n[").next().unwrap();
    assert!(kept.len() <= 51200);
    assert_eq!(details["truncation"]["outputBytes"], kept.len());
}

#[tokio::test]
async fn grep_errors() {
    let dir = fixture(false);
    let grep = GrepTool::new(dir.path());
    let err = call(&grep, json!({"pattern": "x", "path": "missing"}))
        .await
        .unwrap_err();
    assert_eq!(
        err.0,
        format!("Path not found: {}", dir.path().join("missing").display())
    );
    let err = call(&grep, json!({"pattern": "("})).await.unwrap_err();
    assert_eq!(
        err.0,
        "regex parse error:\n    (\n    ^\nerror: unclosed group"
    );
    let newline_error = "the literal '\"\\n\"' is not allowed in a regex\n\n\
        Consider enabling multiline mode with the --multiline flag (or -U for short).\n\
        When multiline mode is enabled, new line characters can be matched.";
    for bad in [
        json!({"pattern": "a\\nb"}),
        json!({"pattern": "\\x0A"}),
        json!({"pattern": "a\nb", "literal": true}),
    ] {
        let err = call(&grep, bad).await.unwrap_err();
        assert_eq!(err.0, newline_error);
    }
    // A line feed inside a class is accepted (it never matches within a line).
    let r = call(&grep, json!({"pattern": "[^\\n]ello w", "path": "a.txt"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "a.txt:1: hello world");
    let r = call(&grep, json!({"pattern": "absent-token"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "No matches found");
    assert!(r.details.is_none());
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = grep
        .execute("c", json!({"pattern": "hello"}), cancel, None)
        .await
        .unwrap_err();
    assert_eq!(err.0, "Operation aborted");
}

#[tokio::test]
async fn find_honours_gitignore_outside_and_inside_git() {
    for git in [false, true] {
        let dir = fixture(git);
        let find = FindTool::new(dir.path());
        let r = call(&find, json!({"pattern": "*.txt"})).await.unwrap();
        assert_eq!(
            text(&r),
            ".hidden/h.txt\na.txt\nsub/UP.TXT\nsub/deep/d.txt",
            "git={git}"
        );
        assert!(r.details.is_none());
    }
}

#[tokio::test]
async fn find_lists_directories_with_slash_and_walks_dot_git() {
    let dir = fixture(true);
    let find = FindTool::new(dir.path());
    let r = call(&find, json!({"pattern": "sub*"})).await.unwrap();
    assert_eq!(text(&r), "sub/");
    let r = call(&find, json!({"pattern": "HEAD"})).await.unwrap();
    assert_eq!(text(&r), ".git/HEAD");
    // Smart case: an all-lowercase pattern matches regardless of case.
    let r = call(&find, json!({"pattern": "sub/**/*.txt"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "sub/UP.TXT\nsub/deep/d.txt");
    let r = call(&find, json!({"pattern": "*.TXT"})).await.unwrap();
    assert_eq!(text(&r), "sub/UP.TXT");
    let r = call(&find, json!({"pattern": "*.rs", "path": "sub"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "c.rs");
}

#[tokio::test]
async fn find_hidden_files_reference_test() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".secret/hidden.txt", b"hidden");
    write(dir.path(), "visible.txt", b"visible");
    let find = FindTool::new("/");
    let r = call(&find, json!({"pattern": "**/*.txt", "path": dir.path()}))
        .await
        .unwrap();
    assert_eq!(text(&r), ".secret/hidden.txt\nvisible.txt");
}

#[tokio::test]
async fn find_limit_and_byte_notices() {
    let dir = fixture(false);
    let find = FindTool::new(dir.path());
    let r = call(&find, json!({"pattern": "*", "limit": 2}))
        .await
        .unwrap();
    assert_eq!(
        text(&r),
        ".gitignore\n.hidden/\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]"
    );
    assert_eq!(r.details, Some(json!({"resultLimitReached": 2})));

    let many = tempfile::tempdir().unwrap();
    for i in 0..600 {
        write(many.path(), &format!("{i:04}-{}.md", "n".repeat(95)), b"");
    }
    let find = FindTool::new(many.path());
    let r = call(&find, json!({"pattern": "*.md"})).await.unwrap();
    let t = text(&r);
    assert!(
        t.ends_with("\n\n[50.0KB limit reached]"),
        "{}",
        &t[t.len() - 40..]
    );
    let details = r.details.clone().unwrap();
    assert_eq!(details["truncation"]["totalLines"], 600);
    // 103-byte names plus separators: 492 * 104 - 1 = 51 167 bytes fit.
    assert_eq!(details["truncation"]["outputLines"], 492);
    assert!(t.starts_with(&format!("0000-{}.md\n", "n".repeat(95))));
}

#[tokio::test]
async fn find_errors() {
    let dir = fixture(false);
    let find = FindTool::new(dir.path());
    let missing = dir.path().join("missing");
    let err = call(&find, json!({"pattern": "*", "path": "missing"}))
        .await
        .unwrap_err();
    assert_eq!(
        err.0,
        format!(
            "[fd error]: Search path '{}' is not a directory.\n[fd error]: No valid search paths given.",
            missing.display()
        )
    );
    let err = call(&find, json!({"pattern": "["})).await.unwrap_err();
    assert_eq!(
        err.0,
        "[fd error]: error parsing glob '[': unclosed character class; missing ']'"
    );
    let r = call(&find, json!({"pattern": "*.nothing"})).await.unwrap();
    assert_eq!(text(&r), "No files found matching pattern");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = find
        .execute("c", json!({"pattern": "*"}), cancel, None)
        .await
        .unwrap_err();
    assert_eq!(err.0, "Operation aborted");
}
