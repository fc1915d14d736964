//! The instructions sent with summarization requests.
//!
//! This prose is pi-rs's own (the conformance harness masks it); the structure — the section
//! headings a summary must have and where the text goes in the request — follows pi 0.85.0.

/// System prompt of every summarization request.
pub const SUMMARIZATION_SYSTEM_PROMPT: &str = "You write context summaries. You will be given a \
transcript of a conversation between a user and an AI coding assistant. Produce the summary in \
the exact format requested. Do not continue the conversation, do not answer questions found in \
it, and output nothing but the summary.";

/// Instructions for a first summary (no previous summary).
pub const SUMMARIZATION_PROMPT: &str = "Summarize the conversation above as a checkpoint that \
another model will use to carry on the work. Use exactly this structure:

## Goal
[What the user wants to achieve; list several goals if the session covers several tasks.]

## Constraints & Preferences
- [Requirements, constraints or preferences the user stated, or \"(none)\"]

## Progress
### Done
- [x] [Completed work]

### In Progress
- [ ] [Work under way]

### Blocked
- [Open problems, if any]

## Key Decisions
- **[Decision]**: [Why it was made]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Facts, data, file contents or references needed to continue, or \"(none)\"]

Be brief and precise. Keep exact file paths, function names and error messages.";

/// Instructions when a previous summary exists and must be updated.
pub const UPDATE_SUMMARIZATION_PROMPT: &str = "The conversation above continues the work \
described in <previous-summary>. Update that summary with the new messages:
- keep everything from the previous summary that still matters;
- add new progress, decisions and context;
- move items from \"In Progress\" to \"Done\" when they were completed;
- update \"Next Steps\" to reflect what remains;
- keep exact file paths, function names and error messages.

Use exactly this structure:

## Goal
[The user's goals, kept from the previous summary and extended if new tasks appeared.]

## Constraints & Preferences
- [Kept and new constraints or preferences]

## Progress
### Done
- [x] [Completed work, old and new]

### In Progress
- [ ] [Current work]

### Blocked
- [Open problems, if any]

## Key Decisions
- **[Decision]**: [Why it was made]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Facts, data or references needed to continue]

Be brief and precise.";

/// Instructions for the prefix of a turn that was too large to keep.
pub const TURN_PREFIX_SUMMARIZATION_PROMPT: &str = "The conversation above is the beginning of \
a turn that was too long to keep; its later part is kept verbatim. Summarize this beginning so \
the kept part makes sense on its own:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [Decisions made and work done in this beginning]

## Context for Suffix
- [What is needed to understand the kept part]

Be brief. Focus on what is needed to understand the kept part.";

/// Instructions for a branch summary.
pub const BRANCH_SUMMARY_PROMPT: &str = "The conversation above is a branch the user explored \
and then left. Summarize it so the work can continue from another point of the conversation:

## Goal
[What the user tried to achieve in this branch]

## Constraints & Preferences
- [Requirements or preferences stated, or \"(none)\"]

## Progress
### Done
- [x] [Completed work]

### In Progress
- [ ] [Work that was under way]

### Blocked
- [Open problems, if any]

## Key Decisions
- **[Decision]**: [Why]

## Next Steps
1. [What would come next]

Be brief and keep exact file paths, function names and error messages.";

/// Fixed preamble of a branch summary (an interface string: it is stored in the session).
pub const BRANCH_SUMMARY_PREAMBLE: &str = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";
