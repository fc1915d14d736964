//! SigV4 signing of a ConverseStream request with `aws-sigv4`, as the AWS SDK for
//! JavaScript signs it: service `bedrock`, every header but `user-agent` and
//! `authorization` signed (including `content-length` and `host`), the payload hash sent as
//! `x-amz-content-sha256`, a session token as `x-amz-security-token`.

use std::time::SystemTime;
#[cfg(test)]
use std::time::UNIX_EPOCH;

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
    sign_post(keys, region, SIGNING_NAME, true, url, headers, body, time)
}

/// [`sign_request`] for any `service`; `payload_header` sends (and signs) the payload hash
/// as `x-amz-content-sha256`.
#[allow(clippy::too_many_arguments)]
fn sign_post(
    keys: &AwsKeys,
    region: &str,
    service: &str,
    payload_header: bool,
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
    if payload_header {
        settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
    }
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(service)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Cases of the SigV4 test suite shipped with `aws-sigv4` 1.6.4
    /// (`aws-signing-test-suite/v4/<case>`, from awslabs/aws-c-auth, Apache-2.0): request,
    /// keys, time and the expected signature.
    #[test]
    fn sigv4_test_suite_post_cases() {
        let time = UNIX_EPOCH + std::time::Duration::from_secs(1_440_938_160); // 2015-08-30T12:36:00Z
        let token = "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==";
        let host = || ("host".to_owned(), "example.amazonaws.com".to_owned());
        /// Name, session token, payload header, headers, body, expected signature.
        type Case<'a> = (
            &'a str,
            Option<&'a str>,
            bool,
            Vec<(String, String)>,
            &'a [u8],
            &'a str,
        );
        let cases: [Case; 3] = [
            (
                "post-vanilla",
                None,
                false,
                vec![host()],
                b"",
                "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
            ),
            (
                "post-sts-header-before",
                Some(token),
                false,
                vec![host()],
                b"",
                "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead",
            ),
            (
                "post-x-www-form-urlencoded",
                None,
                true,
                vec![
                    (
                        "content-type".to_owned(),
                        "application/x-www-form-urlencoded".to_owned(),
                    ),
                    host(),
                    ("content-length".to_owned(), "13".to_owned()),
                ],
                b"Param1=value1",
                "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b",
            ),
        ];
        for (name, token, payload_header, headers, body, signature) in cases {
            let keys = AwsKeys {
                access_key_id: "AKIDEXAMPLE".into(),
                secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
                session_token: token.map(str::to_owned),
            };
            let added = sign_post(
                &keys,
                "us-east-1",
                "service",
                payload_header,
                "https://example.amazonaws.com/",
                &headers,
                body,
                time,
            )
            .unwrap();
            let auth = added
                .iter()
                .find(|(k, _)| k == "authorization")
                .map(|(_, v)| v.as_str())
                .unwrap();
            assert!(
                auth.ends_with(&format!("Signature={signature}")),
                "{name}: {auth}"
            );
            assert!(
                auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request"),
                "{name}"
            );
            let date = added
                .iter()
                .find(|(k, _)| k == "x-amz-date")
                .map(|(_, v)| v.as_str());
            assert_eq!(date, Some("20150830T123600Z"), "{name}");
        }
    }
}
