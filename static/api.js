// The one fetch helper: JSON in, JSON out, and every failure as an ApiError.

export class ApiError extends Error {
  // The server's envelope {"error": {type, message, line, hint, hint_key}, "partial": ...}.
  constructor({ type, message, line = null, hint = null, hint_key = null }, status, partial = null) {
    super(message);
    this.name = "ApiError";
    this.type = type;
    this.line = line;
    this.hint = hint;
    this.hintKey = hint_key;
    this.status = status;
    this.partial = partial;
  }
}

export async function postJSON(url, body) {
  let response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError({ type: "network", message: String(err.message || err) }, 0);
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    // A proxy's HTML error page, or an empty body: described below by the status alone.
  }
  if (!response.ok) {
    const error = data?.error ?? { type: "http_error", message: `${response.status} ${response.statusText}` };
    throw new ApiError(error, response.status, data?.partial ?? null);
  }
  return data;
}
