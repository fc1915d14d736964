use super::*;

fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
    }
}

/// A minimal valid theme: every required token set to `value`.
fn theme_json(name: &str, value: &str, extra: &str) -> String {
    let colors: Vec<String> = TOKENS
        .iter()
        .filter(|t| t.fallback.is_none())
        .map(|t| format!("\"{}\": {value}", t.name))
        .collect();
    format!(
        "{{\"name\": \"{name}\", \"vars\": {{\"a\": \"b\", \"b\": \"#102030\", \"n\": 42}}, \"colors\": {{{}}}{extra}}}",
        colors.join(", ")
    )
}

#[test]
fn token_table_matches_the_schema_counts() {
    assert_eq!(TOKENS.len(), 56);
    assert_eq!(TOKENS.iter().filter(|t| t.fallback.is_none()).count(), 51);
    let backgrounds: Vec<&str> = TOKENS
        .iter()
        .filter(|t| t.background)
        .map(|t| t.name)
        .collect();
    assert_eq!(
        backgrounds,
        [
            "selectedBg",
            "searchMatchBg",
            "userMessageBg",
            "customMessageBg",
            "toolPendingBg",
            "toolSuccessBg",
            "toolErrorBg"
        ]
    );
}

#[test]
fn builtin_themes_load_cleanly_with_every_token() {
    for (json, name) in [(DARK_JSON, "dark"), (LIGHT_JSON, "light")] {
        let (theme, warnings) = Theme::from_json(name, json, ColorMode::TrueColor)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(warnings.is_empty(), "{name}: {warnings:?}");
        assert_eq!(theme.name(), name);
        for token in TOKENS {
            assert!(theme.color(token.name).is_some(), "{name}: {}", token.name);
        }
        assert_eq!(theme.export_colors().len(), 3);
    }
    let dark = Theme::builtin(ColorScheme::Dark, ColorMode::TrueColor);
    let light = Theme::builtin(ColorScheme::Light, ColorMode::TrueColor);
    // The two differ where it matters: a panel background is dark on dark, light on light.
    let lum = |t: &Theme| match t.color("userMessageBg") {
        Some(Color::Rgb(c)) => c.luminance(),
        other => panic!("{other:?}"),
    };
    assert!(lum(&dark) < 0.1 && lum(&light) > 0.7);
}

#[test]
fn vars_resolve_through_chains_and_fallbacks_apply() {
    let json = theme_json(
        "t",
        "\"a\"",
        ", \"export\": {\"pageBg\": \"n\", \"cardBg\": \"\"}",
    );
    let (theme, warnings) = Theme::from_json("t.json", &json, ColorMode::TrueColor).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(
        theme.color("accent"),
        Some(Color::Rgb(Rgb {
            r: 0x10,
            g: 0x20,
            b: 0x30
        }))
    );
    assert_eq!(theme.fg_ansi("accent"), "\x1b[38;2;16;32;48m");
    assert_eq!(theme.bg_ansi("selectedBg"), "\x1b[48;2;16;32;48m");
    // Optional tokens fall back.
    assert_eq!(theme.color("thinkingMax"), theme.color("thinkingXhigh"));
    assert_eq!(theme.color("searchMatchBg"), theme.color("selectedBg"));
    assert_eq!(theme.fg("accent", "x"), "\x1b[38;2;16;32;48mx\x1b[39m");
    assert_eq!(theme.bg("toolErrorBg", "x"), "\x1b[48;2;16;32;48mx\x1b[49m");
    // Export: an index becomes hex; "" is left out.
    let export = theme.export_colors();
    assert_eq!(export.get("pageBg").map(String::as_str), Some("#00d787"));
    assert!(!export.contains_key("cardBg"));
    // Default and index colours.
    let json = theme_json("t", "\"\"", "");
    let (theme, _) = Theme::from_json("t", &json, ColorMode::TrueColor).unwrap();
    assert_eq!(theme.fg_ansi("text"), "\x1b[39m");
    assert_eq!(theme.bg_ansi("userMessageBg"), "\x1b[49m");
    let json = theme_json("t", "208", "");
    let (theme, _) = Theme::from_json("t", &json, ColorMode::TrueColor).unwrap();
    assert_eq!(theme.fg_ansi("accent"), "\x1b[38;5;208m");
    assert_eq!(
        theme.thinking_border("high").start,
        theme.fg_ansi("thinkingHigh")
    );
    assert_eq!(
        theme.thinking_border("bogus").start,
        theme.fg_ansi("thinkingOff")
    );
}

#[test]
fn invalid_themes_report_every_problem() {
    let err = Theme::from_json("bad.json", "{\"name\": \"x\", \"colors\": {\"accent\": \"#12\", \"border\": 300, \"borderAccent\": \"nope\", \"dim\": true}}", ColorMode::TrueColor)
        .unwrap_err();
    let ThemeError::Invalid {
        label,
        missing,
        errors,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(label, "bad.json");
    assert_eq!(missing.len(), 51 - 4);
    let mut sorted = missing.clone();
    sorted.sort();
    assert_eq!(&sorted, missing);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("/colors/accent") && e.contains("#12"))
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("/colors/border") && e.contains("300"))
    );
    assert!(errors.iter().any(|e| e.contains("\"nope\" is not defined")));
    assert!(
        errors
            .iter()
            .any(|e| e.contains("/colors/dim") && e.contains("boolean"))
    );
    let text = err.to_string();
    assert!(text.starts_with("Invalid theme \"bad.json\":\n"), "{text}");
    assert!(
        text.contains("\nMissing required color tokens:\n"),
        "{text}"
    );
    assert!(text.contains("  - bashMode"));

    let cyclic = theme_json("t", "\"x\"", "")
        .replace("\"a\": \"b\"", "\"x\": \"y\", \"y\": \"x\", \"a\": \"b\"");
    let err = Theme::from_json("t", &cyclic, ColorMode::TrueColor).unwrap_err();
    assert!(
        err.to_string()
            .contains("circular variable reference x -> y -> x"),
        "{err}"
    );

    let slash = theme_json("light/dark", "\"\"", "");
    assert!(
        Theme::from_json("t", &slash, ColorMode::TrueColor)
            .unwrap_err()
            .to_string()
            .contains("reserved")
    );

    assert!(matches!(
        Theme::from_json("t", "{", ColorMode::TrueColor),
        Err(ThemeError::Json { .. })
    ));
    assert!(matches!(
        Theme::from_json("t", "[]", ColorMode::TrueColor),
        Err(ThemeError::Invalid { .. })
    ));

    let extra = theme_json(
        "t",
        "\"\"",
        ", \"colours\": {}, \"export\": {\"fooBg\": \"\"}",
    )
    .replace("\"colors\": {", "\"colors\": {\"acent\": \"\", ");
    let (_, warnings) = Theme::from_json("t", &extra, ColorMode::TrueColor).unwrap();
    let paths: Vec<String> = warnings
        .iter()
        .map(|ThemeWarning::UnknownKey { path }| path.clone())
        .collect();
    assert_eq!(paths, ["/colours", "/colors/acent", "/export/fooBg"]);
}

#[test]
fn colour_depth_fallbacks() {
    let json = theme_json("t", "\"#ff0000\"", "");
    let (theme, _) = Theme::from_json("t", &json, ColorMode::TrueColor).unwrap();
    assert_eq!(theme.fg_ansi("accent"), "\x1b[38;2;255;0;0m");
    assert_eq!(
        theme.with_mode(ColorMode::Ansi256).fg_ansi("accent"),
        "\x1b[38;5;196m"
    );
    assert_eq!(
        theme.with_mode(ColorMode::Ansi16).fg_ansi("accent"),
        "\x1b[91m"
    );
    assert_eq!(
        theme.with_mode(ColorMode::Ansi16).bg_ansi("selectedBg"),
        "\x1b[101m"
    );
    let none = theme.with_mode(ColorMode::None);
    assert_eq!(none.fg_ansi("accent"), "");
    assert_eq!(none.fg("accent", "plain"), "plain");
    assert!(none.fg_paint("accent").is_plain());

    assert_eq!(
        rgb_to_256(Rgb {
            r: 128,
            g: 128,
            b: 128
        }),
        244
    );
    assert_eq!(rgb_to_256(Rgb { r: 0, g: 0, b: 0 }), 16);
    // A tinted grey keeps its tint (cube), a neutral one goes to the ramp.
    assert!(
        rgb_to_256(Rgb {
            r: 40,
            g: 44,
            b: 60
        }) < 232
    );
    assert!(
        rgb_to_256(Rgb {
            r: 40,
            g: 42,
            b: 44
        }) >= 232
    );
    assert_eq!(
        rgb_to_16(Rgb {
            r: 250,
            g: 250,
            b: 250
        }),
        15
    );
    assert_eq!(
        rgb_to_16(Rgb {
            r: 10,
            g: 10,
            b: 120
        }),
        4
    );
    assert_eq!(ansi256_to_rgb(196), Rgb { r: 255, g: 0, b: 0 });
    assert_eq!(ansi256_to_rgb(232), Rgb { r: 8, g: 8, b: 8 });
    assert_eq!(Color::Index(15).to_hex().as_deref(), Some("#ffffff"));
}

#[test]
fn colour_mode_detection() {
    assert_eq!(
        ColorMode::detect(env(&[("NO_COLOR", "1"), ("COLORTERM", "truecolor")])),
        ColorMode::None
    );
    assert_eq!(
        ColorMode::detect(env(&[("NO_COLOR", ""), ("COLORTERM", "truecolor")])),
        ColorMode::TrueColor
    );
    assert_eq!(ColorMode::detect(env(&[("TERM", "dumb")])), ColorMode::None);
    assert_eq!(
        ColorMode::detect(env(&[("TERM", "xterm-256color")])),
        ColorMode::Ansi256
    );
    assert_eq!(
        ColorMode::detect(env(&[("TERM", "xterm-kitty"), ("KITTY_WINDOW_ID", "1")])),
        ColorMode::TrueColor
    );
    // tmux only passes true colour when COLORTERM says so.
    assert_eq!(
        ColorMode::detect(env(&[("TMUX", "/tmp/t,1,0"), ("TERM_PROGRAM", "ghostty")])),
        ColorMode::Ansi256
    );
    assert_eq!(
        ColorMode::detect(env(&[("TMUX", "/tmp/t,1,0"), ("COLORTERM", "24bit")])),
        ColorMode::TrueColor
    );
    assert_eq!(
        ColorMode::detect(env(&[("PI_TRUE_COLOR", "1"), ("TERM", "xterm")])),
        ColorMode::TrueColor
    );
    assert_eq!(
        ColorMode::detect(env(&[("PI_TRUE_COLOR", "0"), ("COLORTERM", "truecolor")])),
        ColorMode::Ansi256
    );
    if !cfg!(windows) {
        assert_eq!(
            ColorMode::detect(env(&[("TERM", "linux")])),
            ColorMode::Ansi16
        );
    }
}

#[test]
fn dark_light_detection_in_pis_order() {
    assert_eq!(scheme_from_colorfgbg("15;0"), Some(ColorScheme::Dark));
    assert_eq!(scheme_from_colorfgbg("0;15"), Some(ColorScheme::Light));
    assert_eq!(
        scheme_from_colorfgbg("0;default;15"),
        Some(ColorScheme::Light)
    );
    assert_eq!(scheme_from_colorfgbg("12;default"), Some(ColorScheme::Dark));
    assert_eq!(scheme_from_colorfgbg("nope"), None);
    let white = Rgb {
        r: 255,
        g: 255,
        b: 255,
    };
    assert_eq!(
        detect_scheme(
            Some(ColorScheme::Dark),
            Some(white),
            env(&[("COLORFGBG", "0;15")])
        ),
        (ColorScheme::Dark, SchemeSource::ColorSchemeReport)
    );
    assert_eq!(
        detect_scheme(None, Some(white), env(&[("COLORFGBG", "15;0")])),
        (ColorScheme::Light, SchemeSource::Background)
    );
    assert_eq!(
        detect_scheme(None, None, env(&[("COLORFGBG", "0;15")])),
        (ColorScheme::Light, SchemeSource::ColorFgBg)
    );
    assert_eq!(
        detect_scheme(None, None, env(&[])),
        (ColorScheme::Dark, SchemeSource::Fallback)
    );
    assert_eq!(
        parse_auto_theme_setting("light / dark"),
        Some(("light", "dark"))
    );
    assert_eq!(parse_auto_theme_setting("a/b/c"), None);
    assert_eq!(parse_auto_theme_setting("/dark"), None);
    assert_eq!(parse_auto_theme_setting("dark"), None);
}

#[test]
fn markdown_style_takes_the_theme_tokens() {
    let theme = Theme::builtin(ColorScheme::Dark, ColorMode::Ansi256);
    let s = theme.markdown_style(true);
    assert_eq!(s.md_code, theme.fg_ansi("mdCode"));
    assert_eq!(
        s.md_heading,
        format!("\x1b[1m{}", theme.fg_ansi("mdHeading"))
    );
    assert_eq!(s.diff_added, theme.fg_ansi("toolDiffAdded"));
    assert_eq!(s.box_bg, theme.bg_ansi("userMessageBg"));
    assert!(!s.md_code.is_empty() && s.md_code.starts_with("\x1b[38;5;"));
    assert!(s.hyperlinks);
    // Without colour only the attributes are left.
    let plain = Theme::builtin(ColorScheme::Dark, ColorMode::None).markdown_style(false);
    assert_eq!(plain.md_heading, "\x1b[1m");
    assert_eq!(plain.md_code, "");
    assert_eq!(plain.muted, "\x1b[2m");
}
