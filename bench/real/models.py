"""The real-model suite's architectures, built from their configs with random weights (nothing is
downloaded), in two sizes: "full" (the published configuration) and "tiny" (2 layers, hidden 64,
small images; the versions committed under tests/models/real/ for `make test`).

Every entry returns an nn.Module in eval mode whose forward takes tensors and returns one tensor
(the last hidden state, or the logits), and example inputs built from a seeded generator.
"""
import dataclasses

import torch
from torch import nn

PARAM_SEED = 1234


@dataclasses.dataclass
class Arch:
    name: str
    family: str            # "transformer" or "cnn"
    build: object          # (size) -> nn.Module
    inputs: object         # (size, batch, generator) -> dict name -> tensor
    dynamic: dict          # input name -> {axis: symbolic name} for the dynamic export


class FirstOutput(nn.Module):
    """Hugging Face models return a ModelOutput; the suite compares the first tensor."""

    def __init__(self, model, input_names, **call_kwargs):
        super().__init__()
        self.model = model
        self.input_names = input_names  # forward's positional inputs are passed by these names
        self.call_kwargs = call_kwargs

    def forward(self, *args):
        out = self.model(**dict(zip(self.input_names, args)), return_dict=False, **self.call_kwargs)
        return out[0]


def _seeded(build):
    def wrapped(size):
        torch.manual_seed(PARAM_SEED)
        return build(size).eval()
    return wrapped


def _tokens(vocab, seq):
    def make(size, batch, gen):
        s = seq[size]
        return {"input_ids": torch.randint(0, vocab[size], (batch, s), generator=gen)}
    return make


def _tokens_and_mask(vocab, seq):
    def make(size, batch, gen):
        s = seq[size]
        mask = torch.ones(batch, s, dtype=torch.int64)
        mask[:, s - s // 4:] = 0  # padded tail, so the mask matters
        return {"input_ids": torch.randint(0, vocab[size], (batch, s), generator=gen), "attention_mask": mask}
    return make


def _image(side, channels=3):
    def make(size, batch, gen):
        return {"pixel_values": torch.randn(batch, channels, side[size], side[size], generator=gen)}
    return make


def bert(size):
    from transformers import BertConfig, BertModel
    cfg = BertConfig() if size == "full" else BertConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, vocab_size=256,
        max_position_embeddings=64)
    cfg._attn_implementation = "eager"
    return FirstOutput(BertModel(cfg, add_pooling_layer=False), ["input_ids", "attention_mask"])


def gpt2(size):
    from transformers import GPT2Config, GPT2Model
    cfg = GPT2Config() if size == "full" else GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=256, n_positions=64)
    cfg._attn_implementation = "eager"
    return FirstOutput(GPT2Model(cfg), ["input_ids", "attention_mask"], use_cache=False)


def llama(size):
    """A Llama-style decoder: RMSNorm, rotary embeddings, SwiGLU, grouped-query attention (about
    100M parameters in the full size)."""
    from transformers import LlamaConfig, LlamaModel
    cfg = LlamaConfig(hidden_size=768, intermediate_size=2048, num_hidden_layers=8, num_attention_heads=12,
                      num_key_value_heads=4, vocab_size=32000, max_position_embeddings=512) if size == "full" else \
        LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                    num_key_value_heads=2, vocab_size=256, max_position_embeddings=64)
    cfg._attn_implementation = "eager"
    return FirstOutput(LlamaModel(cfg), ["input_ids", "attention_mask"], use_cache=False)


def vit(size):
    from transformers import ViTConfig, ViTModel
    cfg = ViTConfig() if size == "full" else ViTConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, image_size=32, patch_size=8)
    cfg._attn_implementation = "eager"
    return FirstOutput(ViTModel(cfg, add_pooling_layer=False), ["pixel_values"])


class WhisperEncoderOnly(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, input_features):
        return self.encoder(input_features, return_dict=False)[0]


def whisper_encoder(size):
    from transformers import WhisperConfig, WhisperModel
    cfg = WhisperConfig(d_model=384, encoder_layers=4, encoder_attention_heads=6, decoder_layers=4,
                        decoder_attention_heads=6, encoder_ffn_dim=1536, decoder_ffn_dim=1536) if size == "full" else \
        WhisperConfig(d_model=64, encoder_layers=2, encoder_attention_heads=4, decoder_layers=1,
                      decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, num_mel_bins=16,
                      max_source_positions=32)
    cfg._attn_implementation = "eager"
    return WhisperEncoderOnly(WhisperModel(cfg).encoder)


def _features(size, batch, gen):
    mel, frames = (80, 3000) if size == "full" else (16, 64)
    return {"input_features": torch.randn(batch, mel, frames, generator=gen)}


class TinyResNet(nn.Module):
    """ResNet-50's parts at test size: the 7x7 stem with BatchNorm, ReLU and MaxPool, two
    torchvision Bottleneck blocks (the second strided, both with a 1x1 downsample), global pool
    and classifier."""

    def __init__(self):
        super().__init__()
        from torchvision.models.resnet import Bottleneck

        def down(cin, cout, stride):
            return nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 7, 2, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, 2, 1))
        self.blocks = nn.Sequential(Bottleneck(16, 8, downsample=down(16, 32, 1)),
                                    Bottleneck(32, 16, stride=2, downsample=down(32, 64, 2)))
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
        for m in self.modules():  # non-trivial BatchNorm statistics, so that folding them is tested
            if isinstance(m, nn.BatchNorm2d):
                nn.init.uniform_(m.running_mean, -0.2, 0.2)
                nn.init.uniform_(m.running_var, 0.5, 1.5)
                nn.init.uniform_(m.weight, 0.5, 1.5)
                nn.init.uniform_(m.bias, -0.2, 0.2)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


def resnet50(size):
    import torchvision.models as tvm
    return tvm.resnet50(weights=None) if size == "full" else TinyResNet()


def mobilenet_v3_large(size):
    import torchvision.models as tvm
    return tvm.mobilenet_v3_large(weights=None) if size == "full" else tvm.mobilenet_v3_large(weights=None, width_mult=0.25, num_classes=10)


def convnext_tiny(size):
    import torchvision.models as tvm
    if size == "full":
        return tvm.convnext_tiny(weights=None)
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    cfg = [CNBlockConfig(16, 32, 1), CNBlockConfig(32, 64, 1), CNBlockConfig(64, None, 1)]
    return ConvNeXt(cfg, num_classes=10)


SEQ = {"full": 128, "tiny": 16}
TEXT_DYNAMIC = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
IMAGE_DYNAMIC = {"pixel_values": {0: "batch"}}

ARCHS = [
    Arch("bert", "transformer", _seeded(bert), _tokens_and_mask({"full": 30522, "tiny": 256}, SEQ), TEXT_DYNAMIC),
    Arch("gpt2", "transformer", _seeded(gpt2), _tokens_and_mask({"full": 50257, "tiny": 256}, SEQ), TEXT_DYNAMIC),
    Arch("llama", "transformer", _seeded(llama), _tokens_and_mask({"full": 32000, "tiny": 256}, SEQ), TEXT_DYNAMIC),
    Arch("vit", "transformer", _seeded(vit), _image({"full": 224, "tiny": 32}), IMAGE_DYNAMIC),
    Arch("whisper_encoder", "transformer", _seeded(whisper_encoder), _features, {"input_features": {0: "batch"}}),
    Arch("resnet50", "cnn", _seeded(resnet50), _image({"full": 224, "tiny": 32}), IMAGE_DYNAMIC),
    Arch("mobilenet_v3_large", "cnn", _seeded(mobilenet_v3_large), _image({"full": 224, "tiny": 32}), IMAGE_DYNAMIC),
    Arch("convnext_tiny", "cnn", _seeded(convnext_tiny), _image({"full": 224, "tiny": 32}), IMAGE_DYNAMIC),
]


def arch(name):
    for a in ARCHS:
        if a.name == name:
            return a
    raise KeyError(f"unknown architecture {name!r}; known: {', '.join(a.name for a in ARCHS)}")
