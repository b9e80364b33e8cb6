/** @module What the Worker's feed route and object use of the Arrow codec: the stream's media type and its end marker. */
export { ARROW_STREAM_MEDIA_TYPE } from "./arrow-format";
export { ARROW_EOS } from "./arrow-ipc";
