//! SigV4 signing of a ConverseStream request with `aws-sigv4`, as the AWS SDK for
//! JavaScript signs it: service `bedrock`, every header but `user-agent` and
//! `authorization` signed (including `content-length` and `host`), the payload hash sent as
//! `x-amz-content-sha256`, a session token as `x-amz-security-token`.

use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    PayloadChecksumKind, SignableBody, SignableRequest, SigningSettings, sign,
};
use aws_sigv4::sign::v4;

use super::credentials::AwsKeys;
use crate::providers::StreamError;

/// The SigV4 service name of Bedrock's runtime endpoints.
pub const SIGNING_NAME: &str = "bedrock";

/// The headers to add to `headers` (already on the request) so that `POST url` with `body`
/// is signed for `region` at `time`: `x-amz-date`, `x-amz-content-sha256`,
/// `x-amz-security-token` (temporary keys) and `authorization`.
pub fn sign_request(
    keys: &AwsKeys,
    region: &str,
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
    time: SystemTime,
) -> Result<Vec<(String, String)>, StreamError> {
    let identity = Credentials::new(
        keys.access_key_id.clone(),
        keys.secret_access_key.clone(),
        keys.session_token.clone(),
        None,
        "pi",
    )
    .into();
    let mut settings = SigningSettings::default();
    settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(SIGNING_NAME)
        .time(time)
        .settings(settings)
        .build()
        .map_err(|e| StreamError::Credentials(format!("Could not sign the request: {e}")))?
        .into();
    let signable = SignableRequest::new(
        "POST",
        url,
        headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        SignableBody::Bytes(body),
    )
    .map_err(|e| StreamError::Credentials(format!("Could not sign the request: {e}")))?;
    let (instructions, _signature) = sign(signable, &params)
        .map_err(|e| StreamError::Credentials(format!("Could not sign the request: {e}")))?
        .into_parts();
    let (added, _query) = instructions.into_parts();
    Ok(added
        .into_iter()
        .map(|h| (h.name().to_owned(), h.value().to_owned()))
        .collect())
}
