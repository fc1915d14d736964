//! The extension runner on synthetic payloads: the tool hooks, the provider hooks, the
//! `session_before_*` cancel results, and pi's event names and JSON.

use crate::extensions_support;

use pi_ai::UserContent;
use pi_coding_agent::extensions::events::*;
use pi_coding_agent::extensions::*;
use serde_json::json;

use extensions_support::*;

// ----- tool_call ---------------------------------------------------------------------------------

fn tool_call(cmd: &str) -> ToolCallEvent {
    ToolCallEvent {
        tool_call_id: "call_1".into(),
        tool_name: "bash".into(),
        input: json!({"command": cmd}),
    }
}

#[tokio::test]
async fn tool_call_input_changes_are_seen_by_later_handlers_and_the_first_block_wins() {
    let l = log();
    let (c, d) = (l.clone(), l.clone());
    let (r, errors) = runner(vec![
        (
            "prefix.ts",
            ext(|pi| {
                pi.on::<ToolCallEvent, _>(|e, _| {
                    Box::pin(async move {
                        let cmd = e.input["command"].as_str().unwrap_or_default().to_owned();
                        e.input["command"] = json!(format!("source ~/.profile\n{cmd}"));
                        Ok(None)
                    })
                });
                Ok(())
            }),
        ),
        (
            "guard.ts",
            ext(move |pi| {
                let l = c.clone();
                pi.on::<ToolCallEvent, _>(move |e, _| {
                    let l = l.clone();
                    Box::pin(async move {
                        let cmd = e.input["command"].as_str().unwrap_or_default().to_owned();
                        l.lock().unwrap().push(cmd.clone());
                        Ok(cmd.contains("rm -rf").then(|| ToolCallResult {
                            block: true,
                            reason: Some("Dangerous command has been blocked.".into()),
                            terminate: Some(true),
                        }))
                    })
                });
                Ok(())
            }),
        ),
        (
            "after.ts",
            ext(move |pi| {
                let l = d.clone();
                pi.on::<ToolCallEvent, _>(move |_, _| {
                    let l = l.clone();
                    Box::pin(async move {
                        l.lock().unwrap().push("after".into());
                        Ok(Some(ToolCallResult::default()))
                    })
                });
                Ok(())
            }),
        ),
    ]);
    let out = r.emit_tool_call(tool_call("rm -rf /")).await.unwrap();
    assert_eq!(
        out.result,
        Some(ToolCallResult {
            block: true,
            reason: Some("Dangerous command has been blocked.".into()),
            terminate: Some(true)
        })
    );
    assert_eq!(entries(&l), ["source ~/.profile\nrm -rf /"]);

    let out = r.emit_tool_call(tool_call("ls")).await.unwrap();
    assert_eq!(out.result, Some(ToolCallResult::default()));
    assert_eq!(out.input, json!({"command": "source ~/.profile\nls"}));
    assert!(entries(&errors).is_empty());
}

#[tokio::test]
async fn a_failing_tool_call_handler_blocks_without_an_extension_error() {
    let l = log();
    let c = l.clone();
    let later = move |pi: &mut ExtensionApi<'_>| {
        let l = c.clone();
        pi.on::<ToolCallEvent, _>(move |_, _| {
            let l = l.clone();
            Box::pin(async move {
                l.lock().unwrap().push("later".into());
                Ok(None)
            })
        });
        Ok(())
    };
    let (r, errors) = runner(vec![
        (
            "fails.ts",
            ext(|pi| {
                pi.on::<ToolCallEvent, _>(|_, _| {
                    Box::pin(async { Err("policy service down".into()) })
                });
                Ok(())
            }),
        ),
        ("later.ts", ext(later.clone())),
    ]);
    assert_eq!(
        r.emit_tool_call(tool_call("ls")).await,
        Err(HandlerError::new("policy service down"))
    );
    let (r2, errors2) = runner(vec![
        (
            "panics.ts",
            ext(|pi| {
                pi.on::<ToolCallEvent, _>(|_, _| Box::pin(async { panic!("oops") }));
                Ok(())
            }),
        ),
        ("later.ts", ext(later)),
    ]);
    assert_eq!(
        r2.emit_tool_call(tool_call("ls")).await,
        Err(HandlerError::new(
            "Extension failed, blocking execution: oops"
        ))
    );
    assert!(entries(&l).is_empty());
    assert!(entries(&errors).is_empty() && entries(&errors2).is_empty());
}

// ----- tool_result -------------------------------------------------------------------------------

fn tool_result_event() -> ToolResultEvent {
    ToolResultEvent {
        tool_call_id: "c1".into(),
        tool_name: "read".into(),
        input: json!({"path":"a.ts"}),
        content: vec![UserContent::text("line a\nline b")],
        details: None,
        is_error: false,
        usage: None,
    }
}

#[tokio::test]
async fn tool_result_patches_chain_and_untouched_results_stay_none() {
    let (r, errors) = runner(vec![
        (
            "numbers.ts",
            ext(|pi| {
                pi.on::<ToolResultEvent, _>(|e, _| {
                    Box::pin(async move {
                        let text: String = e
                            .content
                            .iter()
                            .filter_map(|c| match c {
                                UserContent::Text(t) => Some(t.text.clone()),
                                _ => None,
                            })
                            .collect::<Vec<_>>()
                            .join("\n");
                        let numbered = text
                            .split('\n')
                            .enumerate()
                            .map(|(i, l)| format!("{}: {l}", i + 1))
                            .collect::<Vec<_>>()
                            .join("\n");
                        Ok(Some(ToolResultPatch {
                            content: Some(vec![UserContent::text(numbered)]),
                            ..Default::default()
                        }))
                    })
                });
                Ok(())
            }),
        ),
        (
            "flag.ts",
            ext(|pi| {
                pi.on::<ToolResultEvent, _>(|e, _| {
                    Box::pin(async move {
                        let first = match &e.content[0] {
                            UserContent::Text(t) => t.text.clone(),
                            _ => String::new(),
                        };
                        Ok(Some(ToolResultPatch {
                            details: Some(json!({"saw": first})),
                            is_error: Some(true),
                            ..Default::default()
                        }))
                    })
                });
                Ok(())
            }),
        ),
    ]);
    let patch = r.emit_tool_result(tool_result_event()).await.unwrap();
    assert_eq!(
        patch.content,
        Some(vec![UserContent::text("1: line a\n2: line b")])
    );
    assert_eq!(patch.details, Some(json!({"saw": "1: line a\n2: line b"})));
    assert_eq!(patch.is_error, Some(true));
    assert!(entries(&errors).is_empty());

    let (r, _) = runner(vec![(
        "noop.ts",
        ext(|pi| {
            pi.on::<ToolResultEvent, _>(|_, _| {
                Box::pin(async { Ok(Some(ToolResultPatch::default())) })
            });
            Ok(())
        }),
    )]);
    assert_eq!(r.emit_tool_result(tool_result_event()).await, None);
}

// ----- provider hooks ------------------------------------------------------------------------

#[tokio::test]
async fn before_provider_headers_mutates_in_place_and_before_provider_request_replaces() {
    let (r, errors) = runner(vec![(
        "h.ts",
        ext(|pi| {
            pi.on::<BeforeProviderHeadersEvent, _>(|e, _| {
                Box::pin(async move {
                    e.set("X-Trace", "abc");
                    e.delete("x-remove-me");
                    Ok(None)
                })
            });
            pi.on::<BeforeProviderHeadersEvent, _>(|e, _| {
                Box::pin(async move {
                    let seen = e.get("x-trace").unwrap_or_default().to_owned();
                    e.set("X-Seen", seen);
                    Err("after mutating".into())
                })
            });
            pi.on::<BeforeProviderRequestEvent, _>(|e, _| {
                Box::pin(async move {
                    let mut p = e.payload.clone();
                    p["temperature"] = json!(0);
                    Ok(Some(p))
                })
            });
            pi.on::<BeforeProviderRequestEvent, _>(|_, _| Box::pin(async { Ok(None) }));
            pi.on::<BeforeProviderRequestEvent, _>(|e, _| {
                Box::pin(async move {
                    assert_eq!(e.payload["temperature"], json!(0));
                    Err("observer failed".into())
                })
            });
            Ok(())
        }),
    )]);
    let headers = r
        .emit_before_provider_headers(vec![("x-remove-me".into(), Some("1".into()))])
        .await;
    assert_eq!(
        headers,
        vec![
            ("x-remove-me".to_owned(), None),
            ("X-Trace".to_owned(), Some("abc".to_owned())),
            ("X-Seen".to_owned(), Some("abc".to_owned())),
        ]
    );
    let payload = r.emit_before_provider_request(json!({"model":"m"})).await;
    assert_eq!(payload, json!({"model":"m","temperature":0}));
    assert_eq!(
        entries(&errors),
        [
            "h.ts|before_provider_headers|after mutating",
            "h.ts|before_provider_request|observer failed"
        ]
    );
}

// ----- session_before_* -------------------------------------------------------------------------

#[tokio::test]
async fn session_before_events_return_at_once_on_cancel_and_keep_the_last_result() {
    let l = log();
    let c = l.clone();
    let (r, errors) = runner(vec![
        (
            "a.ts",
            ext(|pi| {
                pi.on::<SessionBeforeForkEvent, _>(|_, _| {
                    Box::pin(async {
                        Ok(Some(ForkResult {
                            cancel: false,
                            skip_conversation_restore: Some(true),
                        }))
                    })
                });
                pi.on::<SessionBeforeSwitchEvent, _>(|_, _| Box::pin(async { Err("x".into()) }));
                pi.on::<SessionBeforeSwitchEvent, _>(|e, _| {
                    Box::pin(async move {
                        Ok(Some(CancelResult {
                            cancel: e.reason == SwitchReason::New,
                        }))
                    })
                });
                Ok(())
            }),
        ),
        (
            "b.ts",
            ext(move |pi| {
                let l = c.clone();
                pi.on::<SessionBeforeSwitchEvent, _>(move |_, _| {
                    let l = l.clone();
                    Box::pin(async move {
                        l.lock().unwrap().push("b ran".into());
                        Ok(None)
                    })
                });
                Ok(())
            }),
        ),
    ]);
    let fork = r
        .emit_before(SessionBeforeForkEvent {
            entry_id: "e1".into(),
            position: ForkPosition::Before,
        })
        .await;
    assert_eq!(
        fork,
        Some(ForkResult {
            cancel: false,
            skip_conversation_restore: Some(true)
        })
    );
    let cancelled = r
        .emit_before(SessionBeforeSwitchEvent {
            reason: SwitchReason::New,
            target_session_file: None,
        })
        .await;
    assert_eq!(cancelled, Some(CancelResult { cancel: true }));
    assert!(entries(&l).is_empty(), "a cancel stops dispatch");
    let kept = r
        .emit_before(SessionBeforeSwitchEvent {
            reason: SwitchReason::Resume,
            target_session_file: Some("/s.jsonl".into()),
        })
        .await;
    assert_eq!(kept, Some(CancelResult { cancel: false }));
    assert_eq!(entries(&l), ["b ran"]);
    assert_eq!(
        entries(&errors),
        [
            "a.ts|session_before_switch|x",
            "a.ts|session_before_switch|x"
        ]
    );
}

#[test]
fn session_compact_failed_and_lifecycle_payloads_use_pis_json_names() {
    let failed = SessionCompactFailedEvent {
        reason: CompactReason::Overflow,
        error_message: Some("Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.".into()),
        aborted: false,
        will_retry: false,
        from_extension: false,
    };
    assert_eq!(
        serde_json::to_value(&failed).unwrap(),
        json!({"reason":"overflow","errorMessage":"Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.","aborted":false,"willRetry":false,"fromExtension":false})
    );
    let aborted = SessionCompactFailedEvent {
        reason: CompactReason::Manual,
        error_message: None,
        aborted: true,
        will_retry: false,
        from_extension: true,
    };
    assert_eq!(
        serde_json::to_value(&aborted).unwrap(),
        json!({"reason":"manual","aborted":true,"willRetry":false,"fromExtension":true})
    );
    assert_eq!(
        serde_json::to_value(TurnStartEvent {
            turn_index: 2,
            timestamp: 1700000000000
        })
        .unwrap(),
        json!({"turnIndex":2,"timestamp":1700000000000i64})
    );
    assert_eq!(
        serde_json::to_value(UiPromptStartEvent {
            reason: "ui_prompt",
            kind: UiPromptKind::Confirm,
            title: None
        })
        .unwrap(),
        json!({"reason":"ui_prompt","kind":"confirm"})
    );
    assert_eq!(
        serde_json::to_value(SessionStartEvent {
            reason: SessionStartReason::Fork,
            previous_session_file: Some("/a.jsonl".into())
        })
        .unwrap(),
        json!({"reason":"fork","previousSessionFile":"/a.jsonl"})
    );
}

#[test]
fn every_event_has_pis_type_name() {
    let names = [
        ProjectTrustEvent::NAME,
        SessionStartEvent::NAME,
        ResourcesDiscoverEvent::NAME,
        SessionInfoChangedEvent::NAME,
        SessionBeforeSwitchEvent::NAME,
        SessionBeforeForkEvent::NAME,
        SessionBeforeCompactEvent::NAME,
        SessionCompactEvent::NAME,
        SessionCompactFailedEvent::NAME,
        SessionShutdownEvent::NAME,
        SessionBeforeTreeEvent::NAME,
        SessionTreeEvent::NAME,
        InputEvent::NAME,
        BeforeAgentStartEvent::NAME,
        AgentStartEvent::NAME,
        AgentEndEvent::NAME,
        AgentSettledEvent::NAME,
        MessageStartEvent::NAME,
        MessageUpdateEvent::NAME,
        ToolExecutionStartEvent::NAME,
        ToolExecutionUpdateEvent::NAME,
        ToolExecutionEndEvent::NAME,
        TurnStartEvent::NAME,
        TurnEndEvent::NAME,
        MessageEndEvent::NAME,
        ContextEvent::NAME,
        BeforeProviderHeadersEvent::NAME,
        BeforeProviderRequestEvent::NAME,
        AfterProviderResponseEvent::NAME,
        ToolCallEvent::NAME,
        ToolResultEvent::NAME,
        UserBashEvent::NAME,
        ModelSelectEvent::NAME,
        ThinkingLevelSelectEvent::NAME,
        UiPromptStartEvent::NAME,
        UiPromptEndEvent::NAME,
    ];
    assert_eq!(
        names.join(","),
        "project_trust,session_start,resources_discover,session_info_changed,session_before_switch,session_before_fork,session_before_compact,session_compact,session_compact_failed,session_shutdown,session_before_tree,session_tree,input,before_agent_start,agent_start,agent_end,agent_settled,message_start,message_update,tool_execution_start,tool_execution_update,tool_execution_end,turn_start,turn_end,message_end,context,before_provider_headers,before_provider_request,after_provider_response,tool_call,tool_result,user_bash,model_select,thinking_level_select,ui_prompt_start,ui_prompt_end"
    );
}

#[test]
fn session_compact_failed_payloads_follow_the_failure_kind() {
    let j = |e: SessionCompactFailedEvent| serde_json::to_value(e).unwrap();
    assert_eq!(
        j(SessionCompactFailedEvent::manual(
            "Nothing to compact (session too small)",
            false,
            false
        )),
        json!({"reason":"manual","errorMessage":"Compaction failed: Nothing to compact (session too small)","aborted":false,"willRetry":false,"fromExtension":false})
    );
    assert_eq!(
        j(SessionCompactFailedEvent::manual(
            "Compaction cancelled",
            false,
            false
        )),
        json!({"reason":"manual","aborted":true,"willRetry":false,"fromExtension":false})
    );
    assert_eq!(
        j(SessionCompactFailedEvent::manual(
            "This operation was aborted",
            true,
            true
        )),
        json!({"reason":"manual","aborted":true,"willRetry":false,"fromExtension":true})
    );
    assert_eq!(
        j(SessionCompactFailedEvent::automatic(
            CompactReason::Overflow,
            Some("boom"),
            false
        )),
        json!({"reason":"overflow","errorMessage":"Context overflow recovery failed: boom","aborted":false,"willRetry":false,"fromExtension":false})
    );
    assert_eq!(
        j(SessionCompactFailedEvent::automatic(
            CompactReason::Threshold,
            Some("boom"),
            true
        )),
        json!({"reason":"threshold","errorMessage":"Auto-compaction failed: boom","aborted":false,"willRetry":false,"fromExtension":true})
    );
    assert_eq!(
        j(SessionCompactFailedEvent::automatic(
            CompactReason::Threshold,
            None,
            false
        )),
        json!({"reason":"threshold","aborted":true,"willRetry":false,"fromExtension":false})
    );
    assert_eq!(
        j(SessionCompactFailedEvent::recovery_exhausted(true)),
        json!({"reason":"overflow","errorMessage":"Truncated response recovery failed after one compact-and-retry attempt.","aborted":false,"willRetry":false,"fromExtension":false})
    );
    assert_eq!(
        SessionCompactFailedEvent::recovery_exhausted(false)
            .error_message
            .as_deref(),
        Some(OVERFLOW_RECOVERY_EXHAUSTED)
    );
}

#[tokio::test]
async fn session_compact_failed_is_awaited_by_every_handler() {
    let l = log();
    let c = l.clone();
    let (r, errors) = runner(vec![
        (
            "fails.ts",
            ext(|pi| {
                pi.on::<SessionCompactFailedEvent, _>(|_, _| Box::pin(async { Err("x".into()) }));
                Ok(())
            }),
        ),
        (
            "records.ts",
            ext(move |pi| {
                let l = c.clone();
                pi.on::<SessionCompactFailedEvent, _>(move |e, _| {
                    let l = l.clone();
                    let line = format!("{:?}", e.error_message);
                    Box::pin(async move {
                        tokio::task::yield_now().await;
                        l.lock().unwrap().push(line);
                        Ok(None)
                    })
                });
                Ok(())
            }),
        ),
    ]);
    r.emit(SessionCompactFailedEvent::manual("boom", false, false))
        .await;
    // Awaited: the slow handler finished before `emit` returned.
    assert_eq!(entries(&l), ["Some(\"Compaction failed: boom\")"]);
    assert_eq!(entries(&errors), ["fails.ts|session_compact_failed|x"]);
}
