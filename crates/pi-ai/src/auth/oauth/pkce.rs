//! PKCE (RFC 7636) as pi-ai 0.85.1 `auth/oauth/pkce.js` makes it: a verifier of 32 random
//! bytes in base64url without padding, and its SHA-256 challenge (`S256`).

use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::OAuthError;

/// A PKCE verifier and its challenge. `Debug` hides the verifier.
#[derive(Clone, PartialEq, Eq)]
pub struct Pkce {
    /// The secret sent with the code exchange.
    pub verifier: String,
    /// `base64url(sha256(verifier))`, sent with the authorization request.
    pub challenge: String,
}

impl std::fmt::Debug for Pkce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pkce")
            .field("challenge", &self.challenge)
            .finish()
    }
}

/// `n` random bytes from the operating system.
pub(crate) fn random_bytes(n: usize) -> Result<Vec<u8>, OAuthError> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| OAuthError::new(format!("No randomness: {e}")))?;
    Ok(bytes)
}

/// A fresh verifier and challenge.
///
/// Errors: the operating system has no randomness to give.
pub fn generate() -> Result<Pkce, OAuthError> {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let verifier = b64.encode(random_bytes(32)?);
    let challenge = challenge_of(&verifier);
    Ok(Pkce {
        verifier,
        challenge,
    })
}

/// The `S256` challenge of `verifier`.
pub fn challenge_of(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}
