"""Input data: dataset descriptions and shard scans (dataset_info.py), image preprocessing ops
(image_processing.py), CIFAR-10 batches (cifar10_data.py) and the lookup of an undecodable image
(bad_images.py). The pipelines that use them are in preprocessing.py.
"""
