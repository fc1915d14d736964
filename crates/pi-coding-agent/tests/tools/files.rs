//! The read, write, edit and ls tools through the `AgentTool` trait, on temp dirs.
//!
//! Ports pi 0.85.0's offline tool tests (`packages/coding-agent/test/tools.test.ts`: read, write,
//! edit incl. fuzzy matching and CRLF/BOM, ls) and checks the conformance goldens `tool_read`,
//! `tool_edit`, `tool_parallel_ls_read` (result texts and details) and the parameter schemas the
//! reference sends (`tests/data/tools/tool_schemas.json`, copied from the goldens' requests).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError};
use pi_ai::UserContent;
use pi_coding_agent::tools::{EditTool, LsTool, ReadTool, ReadToolOptions, WriteTool};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

async fn run(tool: &dyn AgentTool, args: Value) -> Result<AgentToolResult, ToolError> {
    let args = tool.prepare_arguments(args);
    tool.execute("call-1", args, CancellationToken::new(), None)
        .await
}

async fn run_err(tool: &dyn AgentTool, args: Value) -> String {
    match run(tool, args).await {
        Ok(r) => panic!("expected an error, got {r:?}"),
        Err(e) => e.0,
    }
}

fn text(result: &AgentToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(UserContent::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

fn p(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn read_tool(cwd: &Path) -> ReadTool {
    ReadTool::new(cwd.to_path_buf(), ReadToolOptions::default())
}

fn lines(n: usize, f: impl Fn(usize) -> String) -> String {
    (1..=n).map(f).collect::<Vec<_>>().join("\n")
}

// ---------------------------------------------------------------- schemas

fn masked(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    if k == "description" {
                        assert!(
                            v.as_str().is_some_and(|s| !s.is_empty()),
                            "empty description"
                        );
                        (k.clone(), json!("<DESCRIPTION>"))
                    } else {
                        (k.clone(), masked(v))
                    }
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(masked).collect()),
        other => other.clone(),
    }
}

#[test]
fn parameter_schemas_match_the_reference() {
    let golden: Value =
        serde_json::from_str(include_str!("../data/tools/tool_schemas.json")).unwrap();
    let cwd = PathBuf::from("/");
    let tools: Vec<Box<dyn AgentTool>> = vec![
        Box::new(read_tool(&cwd)),
        Box::new(WriteTool::new(cwd.clone())),
        Box::new(EditTool::new(cwd.clone())),
        Box::new(LsTool::new(cwd.clone())),
    ];
    for tool in tools {
        let def = tool.definition();
        assert_eq!(tool.label(), def.name);
        let expected = &golden[def.name.as_str()];
        assert_eq!(
            masked(&def.parameters),
            expected["parameters"],
            "schema of {}",
            def.name
        );
        assert!(!def.description.is_empty());
    }
}

// ---------------------------------------------------------------- read

#[tokio::test]
async fn read_returns_content_verbatim_without_details() {
    let dir = tempfile::tempdir().unwrap();
    // conformance golden tool_read
    std::fs::write(
        dir.path().join("hello.txt"),
        "Hello from the scratch dir!\nSecond line.\n",
    )
    .unwrap();
    let r = run(&read_tool(dir.path()), json!({"path": "hello.txt"}))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"content": [{"type": "text", "text": "Hello from the scratch dir!\nSecond line.\n"}]})
    );
    let file = dir.path().join("test.txt");
    std::fs::write(&file, "Hello, world!\nLine 2\nLine 3").unwrap();
    let r = run(&read_tool(dir.path()), json!({"path": p(&file)}))
        .await
        .unwrap();
    assert_eq!(text(&r), "Hello, world!\nLine 2\nLine 3");
    assert_eq!(r.details, None);
    // `@` prefix and cwd-relative resolution.
    let r = run(
        &read_tool(dir.path()),
        json!({"path": "@test.txt", "limit": 1}),
    )
    .await
    .unwrap();
    assert_eq!(
        text(&r),
        "Hello, world!\n\n[2 more lines in file. Use offset=2 to continue.]"
    );
}

#[tokio::test]
async fn read_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nonexistent.txt");
    assert_eq!(
        run_err(&read_tool(dir.path()), json!({"path": "nonexistent.txt"})).await,
        format!(
            "ENOENT: no such file or directory, access '{}'",
            p(&missing)
        )
    );
    assert_eq!(
        run_err(&read_tool(dir.path()), json!({"path": "."})).await,
        "EISDIR: illegal operation on a directory, read"
    );
    let short = dir.path().join("short.txt");
    std::fs::write(&short, "Line 1\nLine 2\nLine 3").unwrap();
    assert_eq!(
        run_err(
            &read_tool(dir.path()),
            json!({"path": "short.txt", "offset": 100})
        )
        .await,
        "Offset 100 is beyond end of file (3 lines total)"
    );
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = read_tool(dir.path())
        .execute("c", json!({"path": "short.txt"}), cancel, None)
        .await
        .unwrap_err();
    assert_eq!(err.0, "Operation aborted");
}

#[tokio::test]
async fn read_truncates_by_lines_and_bytes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("large.txt"),
        lines(2500, |i| format!("Line {i}")),
    )
    .unwrap();
    let r = run(&read_tool(dir.path()), json!({"path": "large.txt"}))
        .await
        .unwrap();
    let out = text(&r);
    assert!(out.contains("Line 2000\n") && !out.contains("Line 2001"));
    assert!(out.ends_with("\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"));
    let t = &r.details.as_ref().unwrap()["truncation"];
    assert_eq!(
        (
            &t["truncated"],
            &t["truncatedBy"],
            &t["totalLines"],
            &t["outputLines"]
        ),
        (&json!(true), &json!("lines"), &json!(2500), &json!(2000))
    );
    // The continuation offset reads the rest.
    let r = run(
        &read_tool(dir.path()),
        json!({"path": "large.txt", "offset": 2001}),
    )
    .await
    .unwrap();
    assert!(text(&r).starts_with("Line 2001\n") && text(&r).ends_with("Line 2500"));
    assert_eq!(r.details, None);

    std::fs::write(
        dir.path().join("bytes.txt"),
        lines(500, |i| format!("Line {i}: {}", "x".repeat(200))),
    )
    .unwrap();
    let r = run(&read_tool(dir.path()), json!({"path": "bytes.txt"}))
        .await
        .unwrap();
    assert!(text(&r).starts_with("Line 1:"));
    assert!(
        text(&r)
            .ends_with("[Showing lines 1-243 of 500 (50.0KB limit). Use offset=244 to continue.]")
    );
}

#[tokio::test]
async fn read_offset_and_limit() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("f.txt"),
        lines(100, |i| format!("Line {i}")),
    )
    .unwrap();
    let tool = read_tool(dir.path());
    let out = text(
        &run(&tool, json!({"path": "f.txt", "offset": 51}))
            .await
            .unwrap(),
    );
    assert!(!out.contains("Line 50\n") && out.starts_with("Line 51") && out.ends_with("Line 100"));
    assert!(!out.contains("Use offset="));
    let out = text(
        &run(&tool, json!({"path": "f.txt", "limit": 10}))
            .await
            .unwrap(),
    );
    assert!(out.ends_with("Line 10\n\n[90 more lines in file. Use offset=11 to continue.]"));
    let out = text(
        &run(&tool, json!({"path": "f.txt", "offset": 41, "limit": 20}))
            .await
            .unwrap(),
    );
    assert!(out.starts_with("Line 41\n"));
    assert!(out.ends_with("Line 60\n\n[40 more lines in file. Use offset=61 to continue.]"));
}

const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAX+XDSwAAAABJRU5ErkJggg==";

fn tiny_bmp() -> Vec<u8> {
    let mut b = vec![0u8; 58];
    b[0..2].copy_from_slice(b"BM");
    b[2..6].copy_from_slice(&58u32.to_le_bytes());
    b[10..14].copy_from_slice(&54u32.to_le_bytes());
    b[14..18].copy_from_slice(&40u32.to_le_bytes());
    b[18..22].copy_from_slice(&1i32.to_le_bytes());
    b[22..26].copy_from_slice(&1i32.to_le_bytes());
    b[26..28].copy_from_slice(&1u16.to_le_bytes());
    b[28..30].copy_from_slice(&24u16.to_le_bytes());
    b[34..38].copy_from_slice(&4u32.to_le_bytes());
    b[56] = 0xff;
    b
}

#[tokio::test]
async fn read_detects_images_by_magic_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let png = base64::engine::general_purpose::STANDARD
        .decode(PNG_1X1)
        .unwrap();
    std::fs::write(dir.path().join("image.txt"), &png).unwrap();
    let r = run(&read_tool(dir.path()), json!({"path": "image.txt"}))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"content": [
            {"type": "text", "text": "Read image file [image/png]"},
            {"type": "image", "data": PNG_1X1, "mimeType": "image/png"}
        ]})
    );

    std::fs::write(dir.path().join("image.bmp"), tiny_bmp()).unwrap();
    let r = run(&read_tool(dir.path()), json!({"path": "image.bmp"}))
        .await
        .unwrap();
    assert_eq!(
        text(&r),
        "Read image file [image/png]\n[Image converted from image/bmp to image/png.]"
    );
    let UserContent::Image(image) = &r.content[1] else {
        panic!("no image block")
    };
    assert_eq!(image.mime_type, "image/png");
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(&image.data)
            .unwrap()[0],
        0x89
    );

    std::fs::write(dir.path().join("not-an-image.png"), "definitely not a png").unwrap();
    let r = run(&read_tool(dir.path()), json!({"path": "not-an-image.png"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "definitely not a png");
    assert_eq!(r.content.len(), 1);
}

#[tokio::test]
async fn read_notes_when_the_model_has_no_image_input() {
    let dir = tempfile::tempdir().unwrap();
    let png = base64::engine::general_purpose::STANDARD
        .decode(PNG_1X1)
        .unwrap();
    std::fs::write(dir.path().join("a.png"), &png).unwrap();
    let options = ReadToolOptions {
        auto_resize_images: true,
        model_supports_images: Some(Arc::new(|| false)),
    };
    let tool = ReadTool::new(dir.path().to_path_buf(), options);
    let r = run(&tool, json!({"path": "a.png"})).await.unwrap();
    assert_eq!(
        text(&r),
        "Read image file [image/png]\n[Current model does not support images. The image will be \
         omitted from this request.]"
    );
    assert_eq!(r.content.len(), 2);
}

// ---------------------------------------------------------------- write

#[tokio::test]
async fn write_creates_files_and_parent_directories() {
    let dir = tempfile::tempdir().unwrap();
    let tool = WriteTool::new(dir.path().to_path_buf());
    let file = dir.path().join("write-test.txt");
    let r = run(&tool, json!({"path": p(&file), "content": "Test content"}))
        .await
        .unwrap();
    assert_eq!(text(&r), format!("Successfully wrote to {}", p(&file)));
    assert_eq!(r.details, None);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "Test content");

    let r = run(
        &tool,
        json!({"path": "nested/dir/test.txt", "content": "Nested ünï"}),
    )
    .await
    .unwrap();
    assert_eq!(text(&r), "Successfully wrote to nested/dir/test.txt");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("nested/dir/test.txt")).unwrap(),
        "Nested ünï"
    );
}

#[tokio::test]
async fn write_reports_node_style_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file"), "x").unwrap();
    let tool = WriteTool::new(dir.path().to_path_buf());
    assert_eq!(
        run_err(&tool, json!({"path": "file/sub/a.txt", "content": ""})).await,
        format!(
            "ENOTDIR: not a directory, mkdir '{}'",
            p(&dir.path().join("file/sub"))
        )
    );
    std::fs::create_dir(dir.path().join("d")).unwrap();
    assert_eq!(
        run_err(&tool, json!({"path": "d", "content": ""})).await,
        format!(
            "EISDIR: illegal operation on a directory, open '{}'",
            p(&dir.path().join("d"))
        )
    );
}

// ---------------------------------------------------------------- edit

#[tokio::test]
async fn edit_golden_tool_edit() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("greet.py"),
        "def greet():\n    print(\"Hello, world\")\n\ngreet()\n",
    )
    .unwrap();
    let tool = EditTool::new(dir.path().to_path_buf());
    let r = run(
        &tool,
        json!({"path": "greet.py", "edits": [{"oldText": "print(\"Hello, world\")", "newText": "print(\"Goodbye, world\")"}]}),
    )
    .await
    .unwrap();
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({
            "content": [{"type": "text", "text": "Successfully replaced 1 block(s) in greet.py."}],
            "details": {
                "diff": " 1 def greet():\n-2     print(\"Hello, world\")\n+2     print(\"Goodbye, world\")\n 3 \n 4 greet()",
                "patch": "--- greet.py\n+++ greet.py\n@@ -1,4 +1,4 @@\n def greet():\n-    print(\"Hello, world\")\n+    print(\"Goodbye, world\")\n \n greet()\n",
                "firstChangedLine": 2
            }
        })
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("greet.py")).unwrap(),
        "def greet():\n    print(\"Goodbye, world\")\n\ngreet()\n"
    );
}

#[tokio::test]
async fn edit_replaces_and_reports_a_patch() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("edit-test.txt");
    std::fs::write(&file, "Hello, world!").unwrap();
    let tool = EditTool::new(dir.path().to_path_buf());
    // The legacy single-edit shape goes through prepare_arguments.
    let r = run(
        &tool,
        json!({"path": p(&file), "oldText": "world", "newText": "testing"}),
    )
    .await
    .unwrap();
    assert_eq!(
        text(&r),
        format!("Successfully replaced 1 block(s) in {}.", p(&file))
    );
    let details = r.details.unwrap();
    assert_eq!(
        details["diff"],
        json!("-1 Hello, world!\n+1 Hello, testing!")
    );
    assert_eq!(
        details["patch"],
        json!(format!(
            "--- {0}\n+++ {0}\n@@ -1,1 +1,1 @@\n-Hello, world!\n\\ No newline at end of file\n+Hello, testing!\n\\ No newline at end of file\n",
            p(&file)
        ))
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "Hello, testing!");
}

#[tokio::test]
async fn edit_errors() {
    let dir = tempfile::tempdir().unwrap();
    let tool = EditTool::new(dir.path().to_path_buf());
    let file = dir.path().join("e.txt");
    std::fs::write(&file, "foo foo foo").unwrap();
    assert_eq!(
        run_err(
            &tool,
            json!({"path": "e.txt", "edits": [{"oldText": "nonexistent", "newText": "x"}]})
        )
        .await,
        "Could not find the exact text in e.txt. The old text must match exactly including all \
         whitespace and newlines."
    );
    assert_eq!(
        run_err(
            &tool,
            json!({"path": "e.txt", "edits": [{"oldText": "foo", "newText": "bar"}]})
        )
        .await,
        "Found 3 occurrences of the text in e.txt. The text must be unique. Please provide more \
         context to make it unique."
    );
    assert_eq!(
        run_err(&tool, json!({"path": "e.txt", "edits": []})).await,
        "Edit tool input is invalid. edits must contain at least one replacement."
    );
    let missing = dir.path().join("missing.txt");
    assert_eq!(
        run_err(
            &tool,
            json!({"path": p(&missing), "edits": [{"oldText": "a", "newText": "b"}]})
        )
        .await,
        format!("Could not edit file: {}. Error code: ENOENT.", p(&missing))
    );
    assert_eq!(
        run_err(
            &tool,
            json!({"path": "e.txt/x", "edits": [{"oldText": "a", "newText": "b"}]})
        )
        .await,
        "Could not edit file: e.txt/x. Error code: ENOTDIR."
    );
    std::fs::write(dir.path().join("multi.txt"), "one\ntwo\nthree\n").unwrap();
    assert_eq!(
        run_err(
            &tool,
            json!({"path": "multi.txt", "edits": [
                {"oldText": "one\ntwo\n", "newText": "ONE\nTWO\n"},
                {"oldText": "two\nthree\n", "newText": "TWO\nTHREE\n"}
            ]})
        )
        .await,
        "edits[0] and edits[1] overlap in multi.txt. Merge them into one edit or target disjoint \
         regions."
    );
    // A failing edit leaves the file untouched.
    assert_eq!(
        run_err(
            &tool,
            json!({"path": "multi.txt", "edits": [
                {"oldText": "one\n", "newText": "ONE\n"},
                {"oldText": "missing\n", "newText": "MISSING\n"}
            ]})
        )
        .await,
        "Could not find edits[1] in multi.txt. The oldText must match exactly including all \
         whitespace and newlines."
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("multi.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
}

#[tokio::test]
async fn edit_multiple_disjoint_regions() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.txt"), "alpha\nbeta\ngamma\ndelta\n").unwrap();
    let tool = EditTool::new(dir.path().to_path_buf());
    let r = run(
        &tool,
        json!({"path": "m.txt", "edits": [
            {"oldText": "alpha\n", "newText": "ALPHA\n"},
            {"oldText": "gamma\n", "newText": "GAMMA\n"}
        ]}),
    )
    .await
    .unwrap();
    assert_eq!(text(&r), "Successfully replaced 2 block(s) in m.txt.");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("m.txt")).unwrap(),
        "ALPHA\nbeta\nGAMMA\ndelta\n"
    );
    let diff = r.details.as_ref().unwrap()["diff"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        diff,
        "-1 alpha\n+1 ALPHA\n 2 beta\n-3 gamma\n+3 GAMMA\n 4 delta"
    );
}

#[tokio::test]
async fn edit_preserves_crlf_and_bom() {
    let dir = tempfile::tempdir().unwrap();
    let tool = EditTool::new(dir.path().to_path_buf());
    let cases = [
        (
            "first\r\nsecond\r\nthird\r\n",
            "second\n",
            "REPLACED\n",
            "first\r\nREPLACED\r\nthird\r\n",
        ),
        (
            "first\nsecond\nthird\n",
            "second\n",
            "REPLACED\n",
            "first\nREPLACED\nthird\n",
        ),
        (
            "\u{FEFF}first\r\nsecond\r\nthird\r\n",
            "second\n",
            "REPLACED\n",
            "\u{FEFF}first\r\nREPLACED\r\nthird\r\n",
        ),
        ("single line content", "line", "LINE", "single LINE content"),
        (
            "first\rsecond\rthird\r",
            "second\n",
            "REPLACED\n",
            "first\nREPLACED\nthird\n",
        ),
        (
            "hello world\r\ngoodbye world\r\n",
            "hello world",
            "HELLO WORLD",
            "HELLO WORLD\r\ngoodbye world\r\n",
        ),
        (
            "line one\r\nline two\r\nline three\r\n",
            "line two\n",
            "replaced line\n",
            "line one\r\nreplaced line\r\nline three\r\n",
        ),
    ];
    for (original, old, new, expected) in cases {
        std::fs::write(dir.path().join("c.txt"), original).unwrap();
        run(
            &tool,
            json!({"path": "c.txt", "edits": [{"oldText": old, "newText": new}]}),
        )
        .await
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("c.txt")).unwrap(),
            expected,
            "{original:?}"
        );
    }
    std::fs::write(
        dir.path().join("c.txt"),
        "\u{FEFF}first\r\nsecond\r\nthird\r\nfourth\r\n",
    )
    .unwrap();
    run(
        &tool,
        json!({"path": "c.txt", "edits": [
            {"oldText": "second\n", "newText": "SECOND\n"},
            {"oldText": "fourth\n", "newText": "FOURTH\n"}
        ]}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("c.txt")).unwrap(),
        "\u{FEFF}first\r\nSECOND\r\nthird\r\nFOURTH\r\n"
    );
    std::fs::write(
        dir.path().join("c.txt"),
        "hello\r\nworld\r\n---\r\nhello\nworld\n",
    )
    .unwrap();
    assert_eq!(
        run_err(
            &tool,
            json!({"path": "c.txt", "edits": [{"oldText": "hello\nworld\n", "newText": "x\n"}]})
        )
        .await,
        "Found 2 occurrences of the text in c.txt. The text must be unique. Please provide more \
         context to make it unique."
    );
}

#[tokio::test]
async fn edit_fuzzy_match_keeps_untouched_lines_and_the_patch_describes_the_change() {
    let dir = tempfile::tempdir().unwrap();
    let original = "keep before  \nfirst target  \nfirst after\nkeep middle   \n";
    std::fs::write(dir.path().join("f.txt"), original).unwrap();
    let tool = EditTool::new(dir.path().to_path_buf());
    let r = run(
        &tool,
        json!({"path": "f.txt", "edits": [{"oldText": "first target\nfirst after", "newText": "FIRST\nFIRST2"}]}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "keep before  \nFIRST\nFIRST2\nkeep middle   \n"
    );
    assert_eq!(
        r.details.unwrap()["patch"],
        json!(
            "--- f.txt\n+++ f.txt\n@@ -1,4 +1,4 @@\n keep before  \n-first target  \n-first after\n+FIRST\n+FIRST2\n keep middle   \n"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_edits_of_one_file_never_lose_an_update() {
    let dir = tempfile::tempdir().unwrap();
    let content: String = (0..40).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("p.txt"), &content).unwrap();
    let tool = Arc::new(EditTool::new(dir.path().to_path_buf()));
    let mut handles = Vec::new();
    for i in 0..40 {
        let tool = Arc::clone(&tool);
        handles.push(tokio::spawn(async move {
            let args = json!({"path": "p.txt", "edits": [{"oldText": format!("line {i}\n"), "newText": format!("LINE {i}\n")}]});
            tool.execute("c", args, CancellationToken::new(), None).await
        }));
    }
    for h in handles {
        h.await.unwrap().unwrap();
    }
    let expected: String = (0..40).map(|i| format!("LINE {i}\n")).collect();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("p.txt")).unwrap(),
        expected
    );
}

// ---------------------------------------------------------------- ls

#[tokio::test]
async fn ls_golden_and_dotfiles() {
    let dir = tempfile::tempdir().unwrap();
    // conformance golden tool_parallel_ls_read
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.py"), "print('hi')\n").unwrap();
    let tool = LsTool::new(dir.path().to_path_buf());
    let r = run(&tool, json!({"path": "."})).await.unwrap();
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"content": [{"type": "text", "text": "notes.txt\nsrc/"}]})
    );
    std::fs::write(dir.path().join(".hidden-file"), "secret").unwrap();
    std::fs::create_dir(dir.path().join(".hidden-dir")).unwrap();
    let r = run(&tool, json!({})).await.unwrap();
    assert_eq!(text(&r), ".hidden-dir/\n.hidden-file\nnotes.txt\nsrc/");
}

#[tokio::test]
async fn ls_orders_like_locale_compare() {
    let dir = tempfile::tempdir().unwrap();
    // Expected order from Node 0.85's `a.toLowerCase().localeCompare(b.toLowerCase())`, except
    // that names equal after lowercasing are in byte order (`A2` before `a2`).
    let expected = [
        "__init__.py",
        "_build",
        "-rf",
        ".env.local",
        ".git",
        ".gitignore",
        "(x)",
        "[y]",
        "{z}",
        "@scope",
        "#tmp#",
        "~backup",
        "$HOME",
        "01.txt",
        "1.txt",
        "Ä",
        "ä",
        "a b",
        "a-b",
        "a.b.c",
        "a1",
        "a10",
        "A2",
        "a2",
        "émile",
        "Eve",
        "Makefile",
        "makefile",
        "o",
        "ø",
        "README.md",
        "readme.txt",
        "ss",
        "ß",
        "u",
        "ü",
        "zeta",
        "Zürich",
        "Ω",
        "ω",
        "中文",
        "日本",
    ];
    for name in expected.iter().rev() {
        std::fs::write(dir.path().join(name), "").unwrap();
    }
    let r = run(&LsTool::new(dir.path().to_path_buf()), json!({}))
        .await
        .unwrap();
    assert_eq!(text(&r), expected.join("\n"));
}

#[tokio::test]
async fn ls_limits_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..5 {
        std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
    }
    let tool = LsTool::new(dir.path().to_path_buf());
    let r = run(&tool, json!({"limit": 3})).await.unwrap();
    assert_eq!(
        text(&r),
        "f0\nf1\nf2\n\n[3 entries limit reached. Use limit=6 for more]"
    );
    assert_eq!(r.details, Some(json!({"entryLimitReached": 3})));
    let r = run(&tool, json!({"limit": 5})).await.unwrap();
    assert_eq!(r.details, None);

    std::fs::create_dir(dir.path().join("empty")).unwrap();
    assert_eq!(
        text(&run(&tool, json!({"path": "empty"})).await.unwrap()),
        "(empty directory)"
    );
    assert_eq!(
        run_err(&tool, json!({"path": "nope"})).await,
        format!("Path not found: {}", p(&dir.path().join("nope")))
    );
    assert_eq!(
        run_err(&tool, json!({"path": "f0"})).await,
        format!("Not a directory: {}", p(&dir.path().join("f0")))
    );
    // A dangling symlink cannot be stat'ed and is skipped.
    std::os::unix::fs::symlink(dir.path().join("gone"), dir.path().join("empty/link")).unwrap();
    assert_eq!(
        text(&run(&tool, json!({"path": "empty"})).await.unwrap()),
        "(empty directory)"
    );
}

#[tokio::test]
async fn ls_byte_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let long = "n".repeat(200);
    for i in 0..300 {
        std::fs::write(dir.path().join(format!("{i:03}{long}")), "").unwrap();
    }
    let r = run(&LsTool::new(dir.path().to_path_buf()), json!({}))
        .await
        .unwrap();
    let out = text(&r);
    // 203-byte names plus separators: 250 fit in 51200 bytes.
    assert!(out.ends_with(&format!("249{long}\n\n[50.0KB limit reached]")));
    let t = &r.details.as_ref().unwrap()["truncation"];
    assert_eq!(t["truncatedBy"], json!("bytes"));
    assert_eq!(t["outputLines"], json!(250));
    assert_eq!(t["maxLines"], json!(9_007_199_254_740_991u64));
    assert!(
        r.details
            .as_ref()
            .unwrap()
            .get("entryLimitReached")
            .is_none()
    );
}

#[tokio::test]
async fn read_scales_large_images_like_pi() {
    // Texts recorded from pi 0.85.0 reading solid-colour PNGs of these sizes.
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (2100, 30, (2000, 29), "1.05"),
        (25, 2100, (24, 2000), "1.04"),
    ];
    for (w, h, (dw, dh), scale) in cases {
        let img = image::RgbImage::from_pixel(w, h, image::Rgb([200, 30, 30]));
        let path = dir.path().join(format!("{w}x{h}.png"));
        img.save(&path).unwrap();
        let r = run(&read_tool(dir.path()), json!({"path": p(&path)}))
            .await
            .unwrap();
        assert_eq!(
            text(&r),
            format!(
                "Read image file [image/png]\n[Image: original {w}x{h}, displayed at {dw}x{dh}. \
                 Multiply coordinates by {scale} to map to original image.]"
            )
        );
        let UserContent::Image(block) = &r.content[1] else {
            panic!("no image")
        };
        assert_eq!(block.mime_type, "image/png");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&block.data)
            .unwrap();
        let decoded = image::load_from_memory(&bytes).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (dw, dh));
    }
    // images.autoResize off: the original goes out untouched.
    let options = ReadToolOptions {
        auto_resize_images: false,
        model_supports_images: None,
    };
    let tool = ReadTool::new(dir.path().to_path_buf(), options);
    let r = run(&tool, json!({"path": "2100x30.png"})).await.unwrap();
    assert_eq!(text(&r), "Read image file [image/png]");
    let UserContent::Image(block) = &r.content[1] else {
        panic!("no image")
    };
    let original = std::fs::read(dir.path().join("2100x30.png")).unwrap();
    assert_eq!(
        block.data,
        base64::engine::general_purpose::STANDARD.encode(original)
    );
}
